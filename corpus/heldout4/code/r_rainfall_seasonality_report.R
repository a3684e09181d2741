#!/usr/bin/env Rscript
# Rainfall seasonality for the catchment volunteers' gauges.
#
# Reads the daily readings the volunteers upload (one CSV per gauge, columns
# date, mm, observer, flag), drops flagged and implausible values, fills
# short gaps from the nearest gauges, and writes a monthly summary plus the
# seasonality index (Walsh & Lawler style) per gauge and hydrological year.
#
# Usage: Rscript rainfall_seasonality_report.R data/gauges out/ [--min-coverage 0.85]

suppressPackageStartupMessages({
  library(dplyr)
  library(tidyr)
  library(readr)
  library(lubridate)
  library(purrr)
})

args <- commandArgs(trailingOnly = TRUE)
if (length(args) < 2) {
  stop("usage: rainfall_seasonality_report.R <gauge-dir> <out-dir> [--min-coverage x]", call. = FALSE)
}
gauge_dir <- args[[1]]
out_dir <- args[[2]]
min_coverage <- 0.85
if ("--min-coverage" %in% args) {
  min_coverage <- as.numeric(args[[which(args == "--min-coverage") + 1]])
}
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)

# Hydrological year starts on 1 October: Oct 2025 belongs to year 2026.
hydro_year <- function(d) year(d) + (month(d) >= 10)

read_gauge <- function(path) {
  id <- tools::file_path_sans_ext(basename(path))
  read_csv(path,
           col_types = cols(date = col_date("%Y-%m-%d"), mm = col_double(),
                            observer = col_character(), flag = col_character()),
           na = c("", "NA", "-", "n/a")) |>
    mutate(gauge = id)
}

gauges <- list.files(gauge_dir, pattern = "\\.csv$", full.names = TRUE)
if (length(gauges) == 0) stop("no CSV files in ", gauge_dir)
raw <- map(gauges, read_gauge) |> list_rbind()
message(sprintf("read %d readings from %d gauges", nrow(raw), length(gauges)))

# A single day above 250 mm has never happened here; treat it as a typo
# (usually a missing decimal point) and drop it rather than guess.
clean <- raw |>
  filter(is.na(flag) | !flag %in% c("overflow", "frozen", "tampered")) |>
  mutate(mm = if_else(mm < 0 | mm > 250, NA_real_, mm)) |>
  distinct(gauge, date, .keep_all = TRUE)

dropped <- nrow(raw) - sum(!is.na(clean$mm))
message(sprintf("dropped or blanked %d readings (%.1f%%)", dropped, 100 * dropped / nrow(raw)))

# Complete the calendar so gaps are explicit.
full_days <- clean |>
  group_by(gauge) |>
  complete(date = seq(min(date), max(date), by = "day")) |>
  ungroup()

# Gauge coordinates for the neighbour fill.
sites <- read_csv(file.path(gauge_dir, "sites.meta"),
                  col_types = cols(gauge = "c", lat = "d", lon = "d", elev_m = "d"))

distance_km <- function(lat1, lon1, lat2, lon2) {
  rad <- pi / 180
  dlat <- (lat2 - lat1) * rad
  dlon <- (lon2 - lon1) * rad
  a <- sin(dlat / 2)^2 + cos(lat1 * rad) * cos(lat2 * rad) * sin(dlon / 2)^2
  6371 * 2 * atan2(sqrt(a), sqrt(1 - a))
}

neighbours <- sites |>
  cross_join(sites, suffix = c("", ".n")) |>
  filter(gauge != gauge.n) |>
  mutate(km = distance_km(lat, lon, lat.n, lon.n),
         elev_diff = abs(elev_m - elev_m.n)) |>
  filter(km <= 12, elev_diff <= 150) |>
  group_by(gauge) |>
  slice_min(km, n = 3, with_ties = FALSE) |>
  ungroup() |>
  select(gauge, neighbour = gauge.n, km)

# Inverse-distance-weighted fill, only for gaps of at most 3 days in a row.
gap_runs <- full_days |>
  arrange(gauge, date) |>
  group_by(gauge) |>
  mutate(missing = is.na(mm),
         run = cumsum(missing != lag(missing, default = FALSE))) |>
  group_by(gauge, run) |>
  mutate(run_len = if_else(missing, n(), 0L)) |>
  ungroup()

fill_values <- gap_runs |>
  filter(missing, run_len <= 3) |>
  select(gauge, date) |>
  inner_join(neighbours, by = "gauge", relationship = "many-to-many") |>
  inner_join(clean |> select(neighbour = gauge, date, mm_n = mm), by = c("neighbour", "date")) |>
  filter(!is.na(mm_n)) |>
  group_by(gauge, date) |>
  summarise(mm_fill = sum(mm_n / km) / sum(1 / km), donors = n(), .groups = "drop")

filled <- gap_runs |>
  left_join(fill_values, by = c("gauge", "date")) |>
  mutate(filled = is.na(mm) & !is.na(mm_fill),
         mm = coalesce(mm, mm_fill)) |>
  select(gauge, date, mm, filled)

monthly <- filled |>
  mutate(hy = hydro_year(date), month = month(date, label = TRUE, abbr = TRUE)) |>
  group_by(gauge, hy, month) |>
  summarise(total_mm = sum(mm, na.rm = TRUE),
            days = n(),
            days_observed = sum(!is.na(mm)),
            days_filled = sum(filled),
            wet_days = sum(mm >= 1, na.rm = TRUE),
            max_day_mm = suppressWarnings(max(mm, na.rm = TRUE)),
            .groups = "drop") |>
  mutate(coverage = days_observed / days,
         max_day_mm = if_else(is.finite(max_day_mm), max_day_mm, NA_real_))

# Seasonality index: SI = (1/R) * sum |x_n - R/12|, over complete years only.
seasonality <- monthly |>
  group_by(gauge, hy) |>
  filter(n() == 12, all(coverage >= min_coverage)) |>
  summarise(annual_mm = sum(total_mm),
            si = sum(abs(total_mm - annual_mm / 12)) / annual_mm,
            wettest = as.character(month[which.max(total_mm)]),
            driest = as.character(month[which.min(total_mm)]),
            .groups = "drop") |>
  mutate(regime = cut(si,
                      breaks = c(-Inf, 0.19, 0.39, 0.59, 0.79, 0.99, 1.19, Inf),
                      labels = c("very equable", "equable, definite wet season",
                                 "rather seasonal", "seasonal", "markedly seasonal",
                                 "most rain in 3 months or less", "extreme")))

write_csv(monthly, file.path(out_dir, "monthly_by_gauge.csv"))
write_csv(seasonality, file.path(out_dir, "seasonality_index.csv"))

skipped <- monthly |>
  group_by(gauge, hy) |>
  summarise(low = sum(coverage < min_coverage), .groups = "drop") |>
  filter(low > 0)
if (nrow(skipped) > 0) {
  message("years left out for low coverage:")
  pwalk(skipped, function(gauge, hy, low) {
    message(sprintf("  %-12s %d  (%d month%s below %.0f%%)", gauge, hy, low,
                    if (low == 1) "" else "s", 100 * min_coverage))
  })
}
message(sprintf("wrote %d gauge-years to %s", nrow(seasonality), out_dir))
