(* Recurring invoice rules for a small coworking space.

   Members are billed monthly for a plan, plus metered extras (meeting-room
   hours, printing, locker). Rules are written by the office manager in a
   tiny text format and parsed here, then applied to a month of usage:

     plan hot_desk 145.00
     plan fixed_desk 230.00
     extra meeting_room per_hour 12.50 free 4
     extra printing per_page 0.08 free 200
     extra locker flat 15.00
     discount student 20%
     discount annual 1 month_in 12
     cap printing 40.00
*)

type money = int (* cents *)

type extra_kind =
  | Per_hour of money * int   (* price, free hours *)
  | Per_page of money * int   (* price, free pages *)
  | Flat of money

type rule =
  | Plan of string * money
  | Extra of string * extra_kind
  | Discount_percent of string * int
  | Discount_free_month of string * int (* every n-th month free *)
  | Cap of string * money

type usage = {
  member : string;
  plan : string;
  tags : string list;
  months_active : int;
  hours : (string * float) list;
  pages : (string * int) list;
  flats : string list;
}

type line = { label : string; amount : money }

exception Parse_error of int * string

let money_of_string s =
  match String.split_on_char '.' s with
  | [ whole ] -> int_of_string whole * 100
  | [ whole; frac ] ->
      let frac = if String.length frac = 1 then frac ^ "0" else frac in
      if String.length frac <> 2 then failwith ("bad amount " ^ s);
      (int_of_string whole * 100) + int_of_string frac
  | _ -> failwith ("bad amount " ^ s)

let string_of_money m =
  let sign = if m < 0 then "-" else "" in
  let m = abs m in
  Printf.sprintf "%s%d.%02d" sign (m / 100) (m mod 100)

let parse_line lineno raw =
  let words =
    String.split_on_char ' ' (String.trim raw) |> List.filter (fun w -> w <> "")
  in
  let err msg = raise (Parse_error (lineno, msg)) in
  let money s = try money_of_string s with Failure m -> err m in
  let int s = match int_of_string_opt s with Some n -> n | None -> err ("not a number: " ^ s) in
  match words with
  | [] -> None
  | w :: _ when String.length w > 0 && w.[0] = '#' -> None
  | [ "plan"; name; price ] -> Some (Plan (name, money price))
  | [ "extra"; name; "per_hour"; price; "free"; n ] -> Some (Extra (name, Per_hour (money price, int n)))
  | [ "extra"; name; "per_hour"; price ] -> Some (Extra (name, Per_hour (money price, 0)))
  | [ "extra"; name; "per_page"; price; "free"; n ] -> Some (Extra (name, Per_page (money price, int n)))
  | [ "extra"; name; "flat"; price ] -> Some (Extra (name, Flat (money price)))
  | [ "discount"; tag; pct ] when String.ends_with ~suffix:"%" pct ->
      let n = int (String.sub pct 0 (String.length pct - 1)) in
      if n <= 0 || n >= 100 then err "discount must be between 1% and 99%";
      Some (Discount_percent (tag, n))
  | [ "discount"; tag; "1"; "month_in"; n ] -> Some (Discount_free_month (tag, int n))
  | [ "cap"; name; amount ] -> Some (Cap (name, money amount))
  | kw :: _ -> err ("unknown rule: " ^ kw)

let parse text =
  String.split_on_char '\n' text
  |> List.mapi (fun i l -> parse_line (i + 1) l)
  |> List.filter_map Fun.id

let find_cap rules name =
  List.find_map (function Cap (n, c) when n = name -> Some c | _ -> None) rules

let extra_lines rules u =
  List.filter_map
    (function
      | Extra (name, Per_hour (price, free)) ->
          let used = Option.value ~default:0. (List.assoc_opt name u.hours) in
          let billable = Float.max 0. (used -. float_of_int free) in
          (* bill in quarter hours, rounded up *)
          let quarters = Float.to_int (Float.ceil (billable *. 4.)) in
          if quarters = 0 then None
          else
            Some { label = Printf.sprintf "%s (%.2f h)" name billable; amount = quarters * price / 4 }
      | Extra (name, Per_page (price, free)) ->
          let used = Option.value ~default:0 (List.assoc_opt name u.pages) in
          let billable = max 0 (used - free) in
          if billable = 0 then None
          else
            let amount = billable * price in
            let amount = match find_cap rules name with Some c -> min c amount | None -> amount in
            Some { label = Printf.sprintf "%s (%d pages)" name billable; amount }
      | Extra (name, Flat price) when List.mem name u.flats -> Some { label = name; amount = price }
      | _ -> None)
    rules

let invoice rules u =
  let plan_price =
    match List.find_map (function Plan (n, p) when n = u.plan -> Some p | _ -> None) rules with
    | Some p -> p
    | None -> invalid_arg ("no such plan: " ^ u.plan)
  in
  let plan_line = { label = "plan " ^ u.plan; amount = plan_price } in
  let discounts =
    List.filter_map
      (function
        | Discount_percent (tag, pct) when List.mem tag u.tags ->
            Some { label = Printf.sprintf "%s discount %d%%" tag pct; amount = -(plan_price * pct / 100) }
        | Discount_free_month (tag, n) when List.mem tag u.tags && u.months_active mod n = 0 ->
            Some { label = tag ^ ": free month"; amount = -plan_price }
        | _ -> None)
      rules
  in
  (* a free month wins over a percentage discount, never both *)
  let discounts =
    if List.exists (fun l -> l.amount = -plan_price) discounts then
      List.filter (fun l -> l.amount = -plan_price) discounts
    else discounts
  in
  let lines = (plan_line :: discounts) @ extra_lines rules u in
  let total = List.fold_left (fun acc l -> acc + l.amount) 0 lines in
  (lines, total)

let () =
  let rules =
    parse
      {|plan hot_desk 145.00
plan fixed_desk 230.00
extra meeting_room per_hour 12.50 free 4
extra printing per_page 0.08 free 200
extra locker flat 15.00
discount student 20%
discount annual 1 month_in 12
cap printing 40.00|}
  in
  let u =
    { member = "Ines Carvalho-Brandt"; plan = "fixed_desk"; tags = [ "student" ];
      months_active = 7; hours = [ ("meeting_room", 6.3) ]; pages = [ ("printing", 812) ];
      flats = [ "locker" ] }
  in
  let lines, total = invoice rules u in
  Printf.printf "Invoice for %s\n" u.member;
  List.iter (fun l -> Printf.printf "  %-28s %10s\n" l.label (string_of_money l.amount)) lines;
  Printf.printf "  %-28s %10s\n" "TOTAL" (string_of_money total)
