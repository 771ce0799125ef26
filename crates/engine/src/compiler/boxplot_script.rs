//! Confirmed spec → the standalone boxplot R script, as a syntax tree printed by
//! `r_printer.rs`. The script is what a reviewer reads and what the runner executes: it embeds
//! its own statistics and plotting functions (nothing of the application), states the spec
//! and snapshot hashes in its header, and ends with the calls on the resolved spec values.
//!
//! Detached, `Rscript script.R snapshot.csv [outdir]` reads the snapshot with explicit column
//! classes and writes `statistics.json` and `plot.png` to `outdir`; governed, the harness
//! defines `analysis_data` before sourcing the script and writes the outputs itself.

mod plot;
mod statistics;

use plot::plot_function;
use sha2::{Digest, Sha256};
use statistics::{
    cell_statistics_function, json_number_function, statistics_function, statistics_json_function,
};

use super::{
    r_printer::{print_script, PrintError},
    r_syntax::{build::*, BinaryOp, RExpr, RScript, RStatement},
};
use crate::ingest::snapshot::SnapshotColumn;
use adamviz_model::{
    digest::Sha256Digest,
    spec::{LowNAction, PlotSpec, SpecState, YScale},
};

/// Version of this compiler's output; part of every script header.
pub const COMPILER_VERSION: &str = "boxplot-script-v1";

/// The fixed, colour-blind-safe palette (Okabe–Ito), in treatment order.
pub const PALETTE: [&str; 8] = [
    "#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#0072B2", "#D55E00", "#F0E442", "#999999",
];

/// The one font family every plot uses (fonts-dejavu-core).
pub const FONT_FAMILY: &str = "DejaVu Sans";

/// Size of the PNG in pixels and its resolution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImageSize {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Pixels per inch (sets the size of text relative to the image).
    pub resolution: u32,
}

impl Default for ImageSize {
    fn default() -> Self {
        Self {
            width: 1200,
            height: 840,
            resolution: 120,
        }
    }
}

/// A compiled script and its hash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledScript {
    /// The script, UTF-8 (in fact ASCII), ending with a newline.
    pub bytes: Vec<u8>,
    /// SHA-256 of `bytes`.
    pub script_hash: Sha256Digest,
    /// SHA-256 of the spec's canonical JSON.
    pub spec_hash: Sha256Digest,
}

/// Why a spec cannot be compiled.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// Only confirmed specs compile.
    #[error("the spec is a draft; confirm it first (adamviz spec confirm)")]
    NotConfirmed,
    /// The spec could not be hashed.
    #[error(transparent)]
    SpecHash(#[from] adamviz_model::spec::CanonicalJsonError),
    /// Text the script would carry cannot be an R string.
    #[error(transparent)]
    Print(#[from] PrintError),
    /// The snapshot's columns do not match the spec.
    #[error("the snapshot has no {role} column {column:?}; take the snapshot from this spec")]
    SnapshotMismatch {
        /// The role.
        role: &'static str,
        /// The column the spec names.
        column: String,
    },
}

/// Compiles a confirmed `spec` for the snapshot with `columns` and `snapshot_hash`.
pub fn compile_boxplot_script(
    spec: &PlotSpec,
    columns: &[SnapshotColumn],
    snapshot_hash: &Sha256Digest,
    image: ImageSize,
) -> Result<CompiledScript, CompileError> {
    if spec.state != SpecState::Confirmed
        || spec.parameter.is_none()
        || spec.records_per_subject_visit.is_none()
    {
        return Err(CompileError::NotConfirmed);
    }
    let spec_hash = spec.spec_hash()?;
    for (role, column) in [
        ("subject", &spec.subject_column),
        ("treatment", &spec.treatment.column),
        ("visit", &spec.visit.column),
        ("value", &spec.value_column),
    ] {
        if !columns.iter().any(|c| c.role == role && &c.name == column) {
            return Err(CompileError::SnapshotMismatch {
                role,
                column: column.clone(),
            });
        }
    }
    let mut statements = header(&spec_hash, snapshot_hash);
    statements.push(RStatement::Blank);
    statements.push(package_check());
    statements.push(RStatement::Blank);
    statements.push(comment(
        "The confirmed spec, resolved: every value the analysis uses.",
    ));
    statements.push(assign(
        "boxplot_spec",
        spec_list(spec, &spec_hash, snapshot_hash, image),
    ));
    for function in [
        cell_statistics_function(),
        statistics_function(),
        plot_function(),
        json_number_function(),
        statistics_json_function(),
    ] {
        statements.push(RStatement::Blank);
        statements.extend(function);
    }
    statements.push(RStatement::Blank);
    statements.extend(main(columns));
    let script = RScript { statements };
    let text = print_script(&script)?;
    let script_hash = Sha256Digest::from_bytes(Sha256::digest(text.as_bytes()).into());
    Ok(CompiledScript {
        bytes: text.into_bytes(),
        script_hash,
        spec_hash,
    })
}

fn header(spec_hash: &Sha256Digest, snapshot_hash: &Sha256Digest) -> Vec<RStatement> {
    vec![comment(format!(
        "adamviz boxplot script ({COMPILER_VERSION}), generated from a confirmed spec.\n\
             spec hash:     {spec_hash}\n\
             snapshot hash: {snapshot_hash}\n\
             \n\
             Detached: Rscript script.R snapshot.csv [outdir]\n\
             writes statistics.json and plot.png to outdir (default: the working directory).\n\
             Governed: the adamviz execution harness defines `analysis_data` and sources this\n\
             file; it needs the objects `boxplot_analysis` and `boxplot_artifact`.\n\
             This script never installs packages."
    ))]
}

fn package_check() -> RStatement {
    expr(RExpr::For(
        crate::compiler::r_syntax::RName::new("package"),
        Box::new(call_positional(
            "c",
            vec![string("ggplot2"), string("patchwork"), string("jsonlite")],
        )),
        Box::new(block(vec![expr(if_else(
            not(call(
                "requireNamespace",
                vec![arg(name("package")), named("quietly", RExpr::Logical(true))],
            )),
            block(vec![expr(call(
                "stop",
                vec![
                    arg(string("R package '")),
                    arg(name("package")),
                    arg(string(
                        "' is not installed; install it (e.g. apt-get install r-cran-<name>) and run again",
                    )),
                    named("call.", RExpr::Logical(false)),
                ],
            ))]),
            None,
        ))])),
    ))
}

fn text_or_missing(text: Option<&str>) -> RExpr {
    text.map_or(RExpr::MissingText, string)
}

/// The resolved spec as an R `list(...)`: every answer the script obeys, literally.
///
/// Long by design: one R literal with a field per answer of the spec, in the spec's order.
fn spec_list(
    spec: &PlotSpec,
    spec_hash: &Sha256Digest,
    snapshot_hash: &Sha256Digest,
    image: ImageSize,
) -> RExpr {
    let y_scale = match spec.y_scale {
        YScale::Fixed => "fixed",
        YScale::Free => "free",
    };
    let below = match spec.low_n.below {
        LowNAction::Annotate => "annotate",
        LowNAction::PointsOnly => "points_only",
        LowNAction::SuppressBox => "suppress_box",
    };
    // `compile_boxplot_script` refuses a spec that leaves either open.
    let (Some(parameter), Some(records)) = (&spec.parameter, &spec.records_per_subject_visit)
    else {
        unreachable!("a confirmed spec has a parameter and a record choice")
    };
    call(
        "list",
        vec![
            named("spec_hash", string(spec_hash.to_hex())),
            named("snapshot_hash", string(snapshot_hash.to_hex())),
            named("question", string(spec.question.as_str())),
            named("title", string(spec.title.as_str())),
            named(
                "parameter",
                call(
                    "list",
                    vec![
                        named("column", string(parameter.column.as_str())),
                        named("value", string(parameter.value.as_str())),
                        named("label", text_or_missing(parameter.label.as_deref())),
                    ],
                ),
            ),
            named(
                "treatment",
                call(
                    "list",
                    vec![
                        named("column", string(spec.treatment.column.as_str())),
                        named("levels", strings(&spec.treatment.levels)),
                    ],
                ),
            ),
            named(
                "visit",
                call(
                    "list",
                    vec![
                        named("column", string(spec.visit.column.as_str())),
                        named("visits", strings(&spec.visit.visits)),
                    ],
                ),
            ),
            named(
                "records",
                call(
                    "list",
                    vec![
                        named(
                            "keep",
                            string(if records.requires_one() {
                                "one"
                            } else {
                                "every"
                            }),
                        ),
                        named("choice", string(records.answer_text())),
                    ],
                ),
            ),
            named("subject_column", string(spec.subject_column.as_str())),
            named("value_column", string(spec.value_column.as_str())),
            named("unit", text_or_missing(spec.unit.as_deref())),
            named("y_scale", string(y_scale)),
            named(
                "low_n",
                call(
                    "list",
                    vec![
                        named("threshold", integer(spec.low_n.threshold as i64)),
                        named("below", string(below)),
                    ],
                ),
            ),
            named(
                "image",
                call(
                    "list",
                    vec![
                        named("width", integer(image.width.into())),
                        named("height", integer(image.height.into())),
                        named("resolution", integer(image.resolution.into())),
                    ],
                ),
            ),
        ],
    )
}

/// `spec$a$b…`
fn field(base: &str, path: &[&str]) -> RExpr {
    path.iter()
        .fold(name(base), |target, part| dollar(target, part))
}

/// The script's detached main: read the snapshot with its column classes, run the statistics
/// and the plot, write the outputs.
///
/// Long by design: it is the main block of the generated script, written as its syntax tree in
/// the order the script reads; split, one block would be scattered over several Rust ones.
fn main(columns: &[SnapshotColumn]) -> Vec<RStatement> {
    let names = call_positional(
        "c",
        columns.iter().map(|c| string(c.name.as_str())).collect(),
    );
    let classes = call_positional(
        "c",
        columns.iter().map(|c| string(c.class.as_str())).collect(),
    );
    let arguments = || name("boxplot_arguments");
    let argument = |i: i64| index(arguments(), vec![arg(integer(i))]);
    let stop = |parts: Vec<RExpr>| {
        let mut args: Vec<_> = parts.into_iter().map(arg).collect();
        args.push(named("call.", RExpr::Logical(false)));
        expr(call("stop", args))
    };
    let n_arguments = || call_positional("length", vec![arguments()]);
    let image = |part: &str| field("boxplot_spec", &["image", part]);
    let detached_setup = vec![
        assign("boxplot_detached", RExpr::Logical(true)),
        assign(
            "boxplot_arguments",
            call(
                "commandArgs",
                vec![named("trailingOnly", RExpr::Logical(true))],
            ),
        ),
        expr(if_else(
            binary(BinaryOp::Less, n_arguments(), integer(1)),
            block(vec![stop(vec![string(
                "usage: Rscript script.R snapshot.csv [outdir]",
            )])]),
            None,
        )),
        assign(
            "analysis_data",
            call(
                "utils::read.csv",
                vec![
                    arg(argument(1)),
                    named("colClasses", classes),
                    named("na.strings", string("")),
                    named("check.names", RExpr::Logical(false)),
                    named("encoding", string("UTF-8")),
                    named("stringsAsFactors", RExpr::Logical(false)),
                ],
            ),
        ),
        expr(if_else(
            not(call_positional(
                "identical",
                vec![call_positional("names", vec![name("analysis_data")]), names],
            )),
            block(vec![stop(vec![
                string("the snapshot's columns are not the spec's: "),
                call(
                    "paste",
                    vec![
                        arg(call_positional("names", vec![name("analysis_data")])),
                        named("collapse", string(", ")),
                    ],
                ),
            ])]),
            None,
        )),
        assign(
            "boxplot_outdir",
            if_else(
                binary(BinaryOp::GreaterEqual, n_arguments(), integer(2)),
                argument(2),
                Some(string(".")),
            ),
        ),
    ];
    let outputs = vec![
        expr(call(
            "dir.create",
            vec![
                arg(name("boxplot_outdir")),
                named("showWarnings", RExpr::Logical(false)),
                named("recursive", RExpr::Logical(true)),
            ],
        )),
        expr(call(
            "writeLines",
            vec![
                arg(call_positional(
                    "boxplot_statistics_json",
                    vec![name("boxplot_analysis")],
                )),
                arg(call_positional(
                    "file.path",
                    vec![name("boxplot_outdir"), string("statistics.json")],
                )),
                named("useBytes", RExpr::Logical(true)),
            ],
        )),
        expr(call(
            "grDevices::png",
            vec![
                arg(call_positional(
                    "file.path",
                    vec![name("boxplot_outdir"), string("plot.png")],
                )),
                named("width", image("width")),
                named("height", image("height")),
                named("res", image("resolution")),
                named("type", string("cairo")),
                named("bg", string("white")),
            ],
        )),
        expr(call_positional("print", vec![name("boxplot_artifact")])),
        expr(call_positional(
            "invisible",
            vec![call_positional("grDevices::dev.off", vec![])],
        )),
    ];
    vec![
        comment(
            "Governed runs define analysis_data before sourcing this file; detached runs read\n\
             the snapshot CSV named on the command line, with its column classes.",
        ),
        expr(if_else(
            call(
                "exists",
                vec![
                    arg(string("analysis_data")),
                    named("inherits", RExpr::Logical(false)),
                ],
            ),
            block(vec![assign("boxplot_detached", RExpr::Logical(false))]),
            Some(block(detached_setup)),
        )),
        RStatement::Blank,
        assign(
            "boxplot_analysis",
            call_positional(
                "boxplot_statistics",
                vec![name("analysis_data"), name("boxplot_spec")],
            ),
        ),
        assign(
            "boxplot_artifact",
            call_positional(
                "boxplot_plot",
                vec![
                    name("analysis_data"),
                    name("boxplot_analysis"),
                    name("boxplot_spec"),
                ],
            ),
        ),
        expr(if_else(name("boxplot_detached"), block(outputs), None)),
    ]
}
