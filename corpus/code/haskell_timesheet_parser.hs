{-# LANGUAGE OverloadedStrings #-}
{-# LANGUAGE LambdaCase #-}

-- | Parses the plain-text timesheets the carpentry workshop keeps in a shared
-- folder and totals hours per job and per person.
--
-- The format grew by habit, so the parser accepts what people actually type:
--
-- > # week 23
-- > mon 07:30-12:00 bryn  J-1182 kitchen cabinets
-- > mon 12:30-16:15 bryn  J-1182
-- > tue 08:00-11:45 ottilie J-1190 oak staircase ; sanding
-- > tue 7:45-9:00  bryn  SHOP   sharpening
--
-- Blank lines and lines starting with @#@ are ignored; text after @;@ is a
-- note; a job is either @J-@ and digits or one of the shop codes.
module Workshop.Timesheet
  ( Entry (..)
  , Job (..)
  , ParseError (..)
  , parseSheet
  , minutesByJob
  , minutesByPerson
  , renderHours
  ) where

import Data.Char (isDigit, isSpace, toLower)
import Data.List (foldl', sortOn)
import qualified Data.Map.Strict as Map
import Data.Text (Text)
import qualified Data.Text as T
import Text.Read (readMaybe)

data Job
  = Customer Int       -- ^ J-1182
  | Shop               -- ^ maintenance, sharpening, tidying
  | Training
  deriving (Eq, Ord, Show)

data Entry = Entry
  { entryDay     :: Text
  , entryStart   :: Int  -- ^ minutes after midnight
  , entryEnd     :: Int
  , entryPerson  :: Text
  , entryJob     :: Job
  , entryNote    :: Maybe Text
  } deriving (Eq, Show)

data ParseError = ParseError
  { errLine   :: Int
  , errReason :: String
  } deriving (Eq, Show)

days :: [Text]
days = ["mon", "tue", "wed", "thu", "fri", "sat"]

-- | Parses every line; returns all errors rather than stopping at the first,
-- because the sheet is fixed by hand and one pass should show everything.
parseSheet :: Text -> Either [ParseError] [Entry]
parseSheet input =
  case foldr step ([], []) numbered of
    ([], entries) -> Right entries
    (errs, _)     -> Left errs
  where
    numbered = zip [1 ..] (T.lines input)
    step (n, raw) (errs, entries) =
      case parseLine raw of
        Nothing          -> (errs, entries)
        Just (Left why)  -> (ParseError n why : errs, entries)
        Just (Right e)   -> (errs, e : entries)

parseLine :: Text -> Maybe (Either String Entry)
parseLine raw
  | T.null body || "#" `T.isPrefixOf` body = Nothing
  | otherwise = Just $ do
      (day, rest1)    <- word "day" body
      day'            <- checkDay day
      (range, rest2)  <- word "time range" rest1
      (start, end)    <- timeRange range
      (person, rest3) <- word "person" rest2
      (jobTxt, _)     <- word "job" rest3
      job             <- parseJob jobTxt
      pure Entry
        { entryDay = day'
        , entryStart = start
        , entryEnd = end
        , entryPerson = T.toLower person
        , entryJob = job
        , entryNote = note
        }
  where
    (beforeNote, afterNote) = T.breakOn ";" raw
    body = T.strip beforeNote
    note = case T.strip (T.drop 1 afterNote) of
      t | T.null t  -> Nothing
        | otherwise -> Just t

word :: String -> Text -> Either String (Text, Text)
word what t =
  let (w, rest) = T.break isSpace (T.stripStart t)
   in if T.null w then Left ("missing " <> what) else Right (w, rest)

checkDay :: Text -> Either String Text
checkDay d
  | T.toLower d `elem` days = Right (T.toLower d)
  | otherwise = Left ("unknown day " <> show d)

timeRange :: Text -> Either String (Int, Int)
timeRange t = case T.splitOn "-" t of
  [a, b] -> do
    s <- clock a
    e <- clock b
    if e <= s
      then Left ("end " <> T.unpack b <> " is not after start " <> T.unpack a)
      else Right (s, e)
  _ -> Left ("expected HH:MM-HH:MM, got " <> T.unpack t)

clock :: Text -> Either String Int
clock t = case T.splitOn ":" t of
  [h, m]
    | Just hh <- readMaybe (T.unpack h)
    , Just mm <- readMaybe (T.unpack m)
    , hh >= 0, hh < 24, mm >= 0, mm < 60
    , T.length m == 2 ->
        Right (hh * 60 + mm)
  _ -> Left ("bad time " <> show t)

parseJob :: Text -> Either String Job
parseJob t = case T.map toLower t of
  "shop"  -> Right Shop
  "train" -> Right Training
  lower
    | Just digits <- T.stripPrefix "j-" lower
    , not (T.null digits)
    , T.all isDigit digits ->
        Right (Customer (read (T.unpack digits)))
    | otherwise -> Left ("unknown job " <> show t)

duration :: Entry -> Int
duration e = entryEnd e - entryStart e

minutesByJob :: [Entry] -> Map.Map Job Int
minutesByJob = foldl' (\m e -> Map.insertWith (+) (entryJob e) (duration e) m) Map.empty

minutesByPerson :: [Entry] -> Map.Map Text Int
minutesByPerson = foldl' (\m e -> Map.insertWith (+) (entryPerson e) (duration e) m) Map.empty

-- | "12h 45m" style, largest first.
renderHours :: (Show k) => Map.Map k Int -> Text
renderHours m =
  T.unlines
    [ T.justifyLeft 16 ' ' (T.pack (show k)) <> fmt v
    | (k, v) <- sortOn (negate . snd) (Map.toList m)
    ]
  where
    fmt v = T.pack (show (v `div` 60)) <> "h " <> T.justifyRight 2 '0' (T.pack (show (v `mod` 60))) <> "m"

-- Tests (run with: runghc -isrc test/TimesheetSpec.hs)
--
-- >>> parseSheet "mon 07:30-12:00 bryn J-1182 kitchen\ntue 08:00-09:15 Bryn shop"
-- Right [Entry {entryDay = "mon", entryStart = 450, entryEnd = 720, entryPerson = "bryn", entryJob = Customer 1182, entryNote = Nothing},Entry {entryDay = "tue", entryStart = 480, entryEnd = 555, entryPerson = "bryn", entryJob = Shop, entryNote = Nothing}]
--
-- >>> parseSheet "# week 23\n\nwed 9:00-8:00 ottilie J-7"
-- Left [ParseError {errLine = 3, errReason = "end 8:00 is not after start 9:00"}]
--
-- >>> parseSheet "sun 09:00-10:00 bryn J-1\nmon 09:0-10:00 bryn J-1\nmon 09:00-10:00 bryn J-"
-- Left [ParseError {errLine = 1, errReason = "unknown day \"sun\""},ParseError {errLine = 2, errReason = "bad time \"09:0\""},ParseError {errLine = 3, errReason = "unknown job \"J-\""}]
--
-- >>> fmap minutesByJob (parseSheet "mon 07:30-12:00 bryn J-1182\nmon 12:30-16:15 bryn J-1182 ; glue-up")
-- Right (fromList [(Customer 1182,495)])
