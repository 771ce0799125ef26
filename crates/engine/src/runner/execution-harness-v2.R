# adamviz execution harness, version execution-harness-v2.
# Application-owned R code that runs one compiled boxplot script in a governed execution.
# Usage (by the runner only): Rscript --vanilla harness.R run|wait
# The working directory holds manifest.json, snapshot.csv and script.R; in "wait" mode (a
# process of the pool, started ahead of time) they are written after start and the runner
# says "go" on stdin. Outputs: statistics.json, plot.png, environment.json.
#
# Everything of the harness lives in the environment of the local() below, not in the global
# environment: the script (sourced into a fresh environment whose parent is the global one)
# can neither see nor change the harness's variables by name.

local({
harness_version <- "execution-harness-v2"
harness_mode <- commandArgs(trailingOnly = TRUE)[1L]
harness_started <- proc.time()[["elapsed"]]

for (package in c("ggplot2", "patchwork", "jsonlite")) {
  if (!requireNamespace(package, quietly = TRUE)) {
    stop("harness: R package '", package, "' is not installed", call. = FALSE)
  }
}

if (identical(harness_mode, "wait")) {
  go <- readLines(file("stdin"), n = 1L, warn = FALSE)
  if (!identical(go, "go")) quit(save = "no", status = 3L)
} else if (!identical(harness_mode, "run")) {
  stop("harness: mode must be run or wait", call. = FALSE)
}

manifest <- jsonlite::fromJSON("manifest.json", simplifyVector = TRUE)
analysis_data <- utils::read.csv(
  "snapshot.csv",
  colClasses = manifest$column_classes,
  na.strings = "",
  check.names = FALSE,
  encoding = "UTF-8",
  stringsAsFactors = FALSE
)
if (!identical(names(analysis_data), manifest$column_names)) {
  stop("harness: the snapshot's columns are not the manifest's", call. = FALSE)
}

# A fresh environment: the script sees analysis_data and base R, nothing of the harness.
script_env <- new.env(parent = globalenv())
assign("analysis_data", analysis_data, envir = script_env)
sys.source("script.R", envir = script_env, keep.source = FALSE)
for (required in c("boxplot_analysis", "boxplot_artifact")) {
  if (!exists(required, envir = script_env, inherits = FALSE)) {
    stop("harness: the script did not create `", required, "`", call. = FALSE)
  }
}
statistics <- get("boxplot_analysis", envir = script_env)
artifact <- get("boxplot_artifact", envir = script_env)

# Whatever the script left at the outputs' names (a symbolic link, a FIFO, a directory) is
# removed, so that the harness writes new regular files in the run's directory.
for (output in c("statistics.json", "plot.png", "environment.json")) {
  unlink(output, recursive = TRUE, force = TRUE)
}

# Statistics as JSON with every double written so that it reads back to the same double.
# JSON has no infinities: they are written as the strings "Inf" and "-Inf" (NaN is missing).
harness_json_number <- function(x) {
  if (is.na(x)) return(structure("null", class = "json"))
  if (is.infinite(x)) return(structure(if (x > 0) "\"Inf\"" else "\"-Inf\"", class = "json"))
  candidates <- sprintf("%.*g", 15:17, x)
  structure(candidates[as.numeric(candidates) == x][[1L]], class = "json")
}
if (!is.list(statistics) || !is.data.frame(statistics$cells)) {
  stop("harness: boxplot_analysis must be a list with a data frame `cells`", call. = FALSE)
}
cells <- statistics$cells
statistics$cells <- lapply(seq_len(nrow(cells)), function(i) {
  lapply(as.list(cells[i, , drop = FALSE]), function(value) {
    if (is.double(value)) harness_json_number(value) else value
  })
})
writeLines(
  jsonlite::toJSON(
    statistics,
    auto_unbox = TRUE, json_verbatim = TRUE, na = "null", null = "null", digits = NA
  ),
  "statistics.json",
  useBytes = TRUE
)

grDevices::png(
  "plot.png",
  width = manifest$image$width,
  height = manifest$image$height,
  res = manifest$image$resolution,
  type = "cairo",
  bg = "white"
)
print(artifact)
invisible(grDevices::dev.off())

font_file <- tryCatch(
  system2("fc-match", c("-f", "%{file}", shQuote("DejaVu Sans")), stdout = TRUE, stderr = FALSE),
  error = function(e) NA_character_,
  warning = function(w) NA_character_
)
package_version <- function(name) as.character(utils::packageVersion(name))
environment_record <- list(
  harness_version = harness_version,
  r_version = R.version.string,
  platform = R.version$platform,
  os = utils::osVersion,
  packages = list(
    ggplot2 = package_version("ggplot2"),
    patchwork = package_version("patchwork"),
    jsonlite = package_version("jsonlite"),
    grDevices = package_version("grDevices")
  ),
  graphics = list(
    device = "png",
    type = "cairo",
    width = manifest$image$width,
    height = manifest$image$height,
    resolution = manifest$image$resolution,
    libraries = as.list(grDevices::grSoftVersion())
  ),
  fonts = list(family = "DejaVu Sans", file = if (length(font_file) == 1L) font_file else NA_character_),
  locale = Sys.getlocale("LC_CTYPE")
)
writeLines(
  jsonlite::toJSON(environment_record, auto_unbox = TRUE, na = "null", null = "null"),
  "environment.json",
  useBytes = TRUE
)
})
