# adamviz execution harness, version execution-harness-v3.
# Application-owned R code that runs one compiled boxplot script in a governed execution.
# Usage (by the runner only): Rscript --vanilla harness.R run|wait
# The working directory holds manifest.json, snapshot.csv and script.R; in "wait" mode (a
# process of the pool, started ahead of time) they are written after start and the runner
# says "go" on stdin. Outputs: statistics.json, plot.png, environment.json, and the report-ready
# outputs plot.pdf, plot.svg (the figure under the manifest's title with its footnotes, drawn by
# R's cairo devices) and statistics.csv.
#
# Everything of the harness lives in the environment of the local() below, not in the global
# environment: the script (sourced into a fresh environment whose parent is the global one)
# can neither see nor change the harness's variables by name.

local({
harness_version <- "execution-harness-v3"
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
harness_outputs <- c(
  "statistics.json", "plot.png", "environment.json", "plot.pdf", "plot.svg", "statistics.csv"
)
for (output in harness_outputs) {
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

# The report-ready figure: the plot as drawn above, under the report's title, with its
# footnotes below, on a landscape page (11 x 8.5 in), by R's cairo devices with the one font
# family embedded (PDF) or drawn as outlines (SVG).
report <- manifest$report
report_title <- if (is.null(report)) NULL else report$title
report_footnotes <- if (is.null(report)) character() else as.character(unlist(report$footnotes))
# A footnote longer than the page is wide (7.5 pt on 11 in: about 170 characters) is wrapped
# at a blank, its continuation indented, rather than clipped at the page's edge.
report_footnotes <- unlist(lapply(report_footnotes, strwrap, width = 150, exdent = 4))
# The report's title stands above the figure, so the plot's own (the same words) is dropped.
report_body <- if (is.null(report_title)) artifact else artifact & ggplot2::labs(title = NULL)
report_figure <- patchwork::wrap_elements(full = report_body) +
  patchwork::plot_annotation(
    title = report_title,
    caption = if (length(report_footnotes) > 0L) paste(report_footnotes, collapse = "\n") else NULL,
    theme = ggplot2::theme(
      plot.title = ggplot2::element_text(family = "DejaVu Sans", face = "bold", size = 13),
      plot.caption = ggplot2::element_text(family = "DejaVu Sans", hjust = 0, size = 7.5)
    )
  )
grDevices::cairo_pdf("plot.pdf", width = 11, height = 8.5, family = "DejaVu Sans", bg = "white")
print(report_figure)
invisible(grDevices::dev.off())
grDevices::svg("plot.svg", width = 11, height = 8.5, family = "DejaVu Sans", bg = "white")
print(report_figure)
invisible(grDevices::dev.off())

# cairo stamps the PDF with the time it was written (/CreationDate (D:YYYYMMDDHHMMSSZ)): the
# stamp is replaced, in place and at the same length, by a fixed one, so that the same inputs
# give the same bytes (the run's time is in the evidence). Exactly one stamp must be found.
pdf_bytes <- readBin("plot.pdf", "raw", n = file.size("plot.pdf"))
stamp_at <- grepRaw("/CreationDate \\(D:[0-9]{14}Z\\)", pdf_bytes, all = TRUE)
# cairo 1.17.6 and later write that dictionary inside a compressed object stream, where it
# cannot be fixed in place: such a run fails, saying so, rather than give bytes that differ from
# one run to the next (adamviz's runners use Debian 12's cairo 1.16).
if (length(stamp_at) != 1L) {
  stop(
    "harness: plot.pdf has no single plain-text CreationDate to fix (cairo ",
    grDevices::grSoftVersion()[["cairo"]],
    "; cairo 1.17.6 and later compress it), so its bytes would differ between runs",
    call. = FALSE
  )
}
fixed_stamp <- charToRaw("/CreationDate (D:20000101000000Z)")
pdf_bytes[stamp_at:(stamp_at + length(fixed_stamp) - 1L)] <- fixed_stamp
writeBin(pdf_bytes, "plot.pdf")

# The statistics as CSV: one row per cell, the columns of statistics.json's cells in their
# order, every double written as in statistics.json (the shortest text that reads back to it).
csv_field <- function(value) {
  if (is.double(value)) {
    if (is.na(value)) return("")
    if (is.infinite(value)) return(if (value > 0) "Inf" else "-Inf")
    candidates <- sprintf("%.*g", 15:17, value)
    return(candidates[as.numeric(candidates) == value][[1L]])
  }
  if (is.na(value)) return("")
  text <- as.character(value)
  if (is.logical(value)) text <- tolower(text)
  if (grepl("[\",\r\n]", text)) text <- paste0("\"", gsub("\"", "\"\"", text, fixed = TRUE), "\"")
  text
}
csv_lines <- c(
  paste(vapply(names(cells), csv_field, ""), collapse = ","),
  vapply(seq_len(nrow(cells)), function(i) {
    paste(vapply(cells[i, , drop = TRUE], csv_field, ""), collapse = ",")
  }, "")
)
csv_connection <- file("statistics.csv", open = "wb")
writeLines(enc2utf8(csv_lines), csv_connection, sep = "\n", useBytes = TRUE)
close(csv_connection)

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
