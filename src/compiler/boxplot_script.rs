//! Confirmed spec → the standalone boxplot R script, as a syntax tree printed by
//! `r_printer.rs`. The script is what a reviewer reads and what the runner executes: it embeds
//! its own statistics and plotting functions (nothing of the application), states the spec
//! and snapshot hashes in its header, and ends with the calls on the resolved spec values.
//!
//! Detached, `Rscript script.R snapshot.csv [outdir]` reads the snapshot with explicit column
//! classes and writes `statistics.json` and `plot.png` to `outdir`; governed, the harness
//! defines `analysis_data` before sourcing the script and writes the outputs itself.

use sha2::{Digest, Sha256};

use super::{
    r_printer::{print_script, PrintError},
    r_syntax::{build::*, BinaryOp, RExpr, RScript, RStatement},
};
use crate::{
    domain::{
        digest::Sha256Digest,
        spec::{LowNAction, PlotSpec, SpecState, YScale},
    },
    ingest::snapshot::SnapshotColumn,
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
    SpecHash(#[from] crate::domain::spec::CanonicalJsonError),
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
    if spec.state != SpecState::Confirmed {
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
                        named("column", string(spec.parameter.column.as_str())),
                        named("value", string(spec.parameter.value.as_str())),
                        named("label", text_or_missing(spec.parameter.label.as_deref())),
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

fn na_real() -> RExpr {
    RExpr::MissingReal
}

fn if_any(n: RExpr, value: RExpr) -> RExpr {
    if_else(n, value, Some(na_real()))
}

fn cell_statistics_function() -> Vec<RStatement> {
    let n_positive = || binary(BinaryOp::Greater, name("n"), integer(0));
    vec![
        comment(
            "Statistics of one treatment x visit cell: n counts non-missing values, n_subjects\n\
             the distinct subjects among them (the low-N rule counts subjects); quartiles are\n\
             R's type 7.",
        ),
        assign(
            "boxplot_cell_statistics",
            function(
                &["values", "subjects", "threshold"],
                vec![
                    assign(
                        "present",
                        not(call_positional("is.na", vec![name("values")])),
                    ),
                    assign("x", index(name("values"), vec![arg(name("present"))])),
                    assign("n", call_positional("length", vec![name("x")])),
                    assign(
                        "n_subjects",
                        call_positional(
                            "length",
                            vec![call_positional(
                                "unique",
                                vec![index(name("subjects"), vec![arg(name("present"))])],
                            )],
                        ),
                    ),
                    assign(
                        "quartiles",
                        if_else(
                            n_positive(),
                            call(
                                "stats::quantile",
                                vec![
                                    arg(name("x")),
                                    arg(call_positional(
                                        "c",
                                        vec![number(0.25), number(0.5), number(0.75)],
                                    )),
                                    named("type", integer(7)),
                                    named("names", RExpr::Logical(false)),
                                ],
                            ),
                            Some(call_positional("rep", vec![na_real(), integer(3)])),
                        ),
                    ),
                    expr(call(
                        "data.frame",
                        vec![
                            named("n", name("n")),
                            named("n_subjects", name("n_subjects")),
                            named(
                                "n_missing",
                                call_positional("sum", vec![not(name("present"))]),
                            ),
                            named(
                                "mean",
                                if_any(n_positive(), call_positional("mean", vec![name("x")])),
                            ),
                            named(
                                "sd",
                                if_any(
                                    binary(BinaryOp::Greater, name("n"), integer(1)),
                                    call_positional("stats::sd", vec![name("x")]),
                                ),
                            ),
                            named("median", element(name("quartiles"), integer(2))),
                            named("q1", element(name("quartiles"), integer(1))),
                            named("q3", element(name("quartiles"), integer(3))),
                            named(
                                "min",
                                if_any(n_positive(), call_positional("min", vec![name("x")])),
                            ),
                            named(
                                "max",
                                if_any(n_positive(), call_positional("max", vec![name("x")])),
                            ),
                            named(
                                "low_n",
                                binary(BinaryOp::Less, name("n_subjects"), name("threshold")),
                            ),
                        ],
                    )),
                ],
            ),
        ),
    ]
}

fn statistics_function() -> Vec<RStatement> {
    let cell_row = call(
        "cbind",
        vec![
            arg(call(
                "data.frame",
                vec![
                    named("treatment", name("level")),
                    named("visit", name("visit_label")),
                    named("stringsAsFactors", RExpr::Logical(false)),
                ],
            )),
            arg(call_positional(
                "boxplot_cell_statistics",
                vec![
                    index(name("values"), vec![arg(name("in_cell"))]),
                    index(name("subjects"), vec![arg(name("in_cell"))]),
                    field("spec", &["low_n", "threshold"]),
                ],
            )),
        ],
    );
    let in_cell = call_positional(
        "which",
        vec![binary(
            BinaryOp::And,
            binary(BinaryOp::Equal, name("treatment"), name("level")),
            binary(BinaryOp::Equal, name("visit"), name("visit_label")),
        )],
    );
    let append_row = RStatement::Assign(
        element(
            name("rows"),
            binary(
                BinaryOp::Plus,
                call_positional("length", vec![name("rows")]),
                integer(1),
            ),
        ),
        cell_row,
    );
    let column = |path: &[&str]| element(name("data"), field("spec", path));
    vec![
        comment(
            "The statistics object: one row per cell, treatments in the confirmed order and\n\
             visits in the confirmed order within each, with the spec values echoed.",
        ),
        assign(
            "boxplot_statistics",
            function(
                &["data", "spec"],
                vec![
                    assign("values", column(&["value_column"])),
                    assign("treatment", column(&["treatment", "column"])),
                    assign("visit", column(&["visit", "column"])),
                    assign("subjects", column(&["subject_column"])),
                    assign("rows", call_positional("list", vec![])),
                    expr(RExpr::For(
                        crate::compiler::r_syntax::RName::new("level"),
                        Box::new(field("spec", &["treatment", "levels"])),
                        Box::new(block(vec![expr(RExpr::For(
                            crate::compiler::r_syntax::RName::new("visit_label"),
                            Box::new(field("spec", &["visit", "visits"])),
                            Box::new(block(vec![assign("in_cell", in_cell), append_row])),
                        ))])),
                    )),
                    assign(
                        "cells",
                        call_positional("do.call", vec![name("rbind"), name("rows")]),
                    ),
                    RStatement::Assign(
                        call_positional("row.names", vec![name("cells")]),
                        RExpr::Null,
                    ),
                    expr(call(
                        "list",
                        vec![
                            named("version", string("boxplot-statistics-v1")),
                            named("spec_hash", field("spec", &["spec_hash"])),
                            named("snapshot_hash", field("spec", &["snapshot_hash"])),
                            named("question", field("spec", &["question"])),
                            named("title", field("spec", &["title"])),
                            named("parameter", field("spec", &["parameter"])),
                            named("treatment_column", field("spec", &["treatment", "column"])),
                            named(
                                "treatment_levels",
                                call_positional("I", vec![field("spec", &["treatment", "levels"])]),
                            ),
                            named("visit_column", field("spec", &["visit", "column"])),
                            named(
                                "visits",
                                call_positional("I", vec![field("spec", &["visit", "visits"])]),
                            ),
                            named("value_column", field("spec", &["value_column"])),
                            named("subject_column", field("spec", &["subject_column"])),
                            named("unit", field("spec", &["unit"])),
                            named("low_n", field("spec", &["low_n"])),
                            named("cells", name("cells")),
                        ],
                    )),
                ],
            ),
        ),
    ]
}

fn plot_function() -> Vec<RStatement> {
    let gg = |function: &str, args: Vec<crate::compiler::r_syntax::RArg>| {
        call(&format!("ggplot2::{function}"), args)
    };
    let facets = |extra: Vec<crate::compiler::r_syntax::RArg>| {
        let mut args = vec![
            arg(gg("vars", vec![arg(name("treatment"))])),
            named("nrow", integer(1)),
            named("drop", RExpr::Logical(false)),
        ];
        args.extend(extra);
        gg("facet_wrap", args)
    };
    let theme_base = |size: f64| {
        gg(
            "theme_bw",
            vec![
                named("base_size", number(size)),
                named("base_family", string(FONT_FAMILY)),
            ],
        )
    };
    let is_policy =
        |policy: &str| call_positional("identical", vec![name("below"), string(policy)]);
    let low_rows = |table: &str, condition: RExpr| index_rows(name(table), condition);
    let factor_of = |values: RExpr, levels: &str| {
        call("factor", vec![arg(values), named("levels", name(levels))])
    };
    let column = |path: &[&str]| element(name("data"), field("spec", path));

    let plot = layers(
        gg(
            "ggplot",
            vec![
                arg(name("cells")),
                arg(gg("aes", vec![named("x", name("visit"))])),
            ],
        ),
        [
            gg("geom_blank", vec![]),
            gg(
                "geom_boxplot",
                vec![
                    named("data", name("boxed")),
                    arg(gg(
                        "aes",
                        vec![named("y", name("value")), named("fill", name("treatment"))],
                    )),
                    named("width", number(0.6)),
                    named("outlier.size", number(0.8)),
                ],
            ),
            facets(vec![named(
                "scales",
                if_else(
                    call_positional(
                        "identical",
                        vec![field("spec", &["y_scale"]), string("free")],
                    ),
                    string("free_y"),
                    Some(string("fixed")),
                ),
            )]),
            gg(
                "scale_x_discrete",
                vec![named("drop", RExpr::Logical(false))],
            ),
            gg(
                "scale_fill_manual",
                vec![
                    named("values", name("palette")),
                    named("limits", name("levels")),
                    named("drop", RExpr::Logical(false)),
                    named("guide", string("none")),
                ],
            ),
            gg(
                "labs",
                vec![
                    named("title", field("spec", &["title"])),
                    named("x", RExpr::Null),
                    named("y", name("y_label")),
                ],
            ),
            theme_base(11.0),
            gg(
                "theme",
                vec![named(
                    "axis.text.x",
                    gg(
                        "element_text",
                        vec![named("angle", number(45.0)), named("hjust", number(1.0))],
                    ),
                )],
            ),
        ],
    );
    let n_table = layers(
        gg(
            "ggplot",
            vec![
                arg(name("cells")),
                arg(gg(
                    "aes",
                    vec![
                        named("x", name("visit")),
                        named("y", string("N")),
                        named("label", name("n_subjects")),
                    ],
                )),
            ],
        ),
        [
            gg("geom_text", vec![named("size", number(3.0))]),
            facets(vec![]),
            gg(
                "scale_x_discrete",
                vec![named("drop", RExpr::Logical(false))],
            ),
            gg(
                "labs",
                vec![named("x", RExpr::Null), named("y", RExpr::Null)],
            ),
            theme_base(9.0),
            gg(
                "theme",
                vec![
                    named("strip.text", gg("element_blank", vec![])),
                    named("strip.background", gg("element_blank", vec![])),
                    named("axis.text.x", gg("element_blank", vec![])),
                    named("axis.ticks", gg("element_blank", vec![])),
                    named("panel.grid", gg("element_blank", vec![])),
                ],
            ),
        ],
    );
    let threshold_text = || field("spec", &["low_n", "threshold"]);
    let footnote = call(
        "switch",
        vec![
            arg(name("below")),
            named(
                "annotate",
                call_positional(
                    "paste0",
                    vec![
                        string("Boxes marked \"low N\" have fewer than "),
                        threshold_text(),
                        string(" subjects."),
                    ],
                ),
            ),
            named(
                "points_only",
                call_positional(
                    "paste0",
                    vec![
                        string("Cells with fewer than "),
                        threshold_text(),
                        string(" subjects show their individual values only."),
                    ],
                ),
            ),
            named(
                "suppress_box",
                call_positional(
                    "paste0",
                    vec![
                        string("Cells with fewer than "),
                        threshold_text(),
                        string(" subjects are not drawn; their N is in the table."),
                    ],
                ),
            ),
        ],
    );
    let prefix = |path: &str| {
        call_positional(
            "substr",
            vec![field("spec", &[path]), integer(1), integer(12)],
        )
    };
    vec![
        comment(
            "The plot object: boxplots of the value by visit, one panel per treatment, the\n\
             low-N policy drawn visibly, and the N per cell (subjects) in a table aligned under\n\
             the panels. No randomness: points are never jittered.",
        ),
        assign(
            "boxplot_plot",
            function(
                &["data", "statistics", "spec"],
                vec![
                    assign("levels", field("spec", &["treatment", "levels"])),
                    assign("visits", field("spec", &["visit", "visits"])),
                    assign("below", field("spec", &["low_n", "below"])),
                    assign(
                        "points",
                        call(
                            "data.frame",
                            vec![
                                named(
                                    "treatment",
                                    factor_of(column(&["treatment", "column"]), "levels"),
                                ),
                                named("visit", factor_of(column(&["visit", "column"]), "visits")),
                                named("value", column(&["value_column"])),
                            ],
                        ),
                    ),
                    assign(
                        "points",
                        index_rows(
                            name("points"),
                            not(call_positional(
                                "is.na",
                                vec![dollar(name("points"), "value")],
                            )),
                        ),
                    ),
                    assign("cells", dollar(name("statistics"), "cells")),
                    RStatement::Assign(
                        dollar(name("cells"), "treatment"),
                        factor_of(dollar(name("cells"), "treatment"), "levels"),
                    ),
                    RStatement::Assign(
                        dollar(name("cells"), "visit"),
                        factor_of(dollar(name("cells"), "visit"), "visits"),
                    ),
                    comment(
                        "Cells are ordered treatment by treatment, so this is each point's cell.",
                    ),
                    RStatement::Assign(
                        dollar(name("points"), "low_n"),
                        index(
                            dollar(name("cells"), "low_n"),
                            vec![arg(binary(
                                BinaryOp::Plus,
                                binary(
                                    BinaryOp::Times,
                                    binary(
                                        BinaryOp::Minus,
                                        call_positional(
                                            "as.integer",
                                            vec![dollar(name("points"), "treatment")],
                                        ),
                                        integer(1),
                                    ),
                                    call_positional("length", vec![name("visits")]),
                                ),
                                call_positional(
                                    "as.integer",
                                    vec![dollar(name("points"), "visit")],
                                ),
                            ))],
                        ),
                    ),
                    assign(
                        "boxed",
                        if_else(
                            is_policy("annotate"),
                            name("points"),
                            Some(low_rows("points", not(dollar(name("points"), "low_n")))),
                        ),
                    ),
                    assign(
                        "palette",
                        call_positional(
                            "rep_len",
                            vec![
                                call_positional("c", PALETTE.iter().map(|c| string(*c)).collect()),
                                call_positional("length", vec![name("levels")]),
                            ],
                        ),
                    ),
                    assign(
                        "y_label",
                        if_else(
                            call_positional("is.na", vec![field("spec", &["unit"])]),
                            field("spec", &["value_column"]),
                            Some(call_positional(
                                "paste0",
                                vec![
                                    field("spec", &["value_column"]),
                                    string(" ("),
                                    field("spec", &["unit"]),
                                    string(")"),
                                ],
                            )),
                        ),
                    ),
                    assign("footnote", footnote),
                    assign(
                        "caption",
                        call_positional(
                            "paste0",
                            vec![
                                name("footnote"),
                                string("\nspec "),
                                prefix("spec_hash"),
                                string("  snapshot "),
                                prefix("snapshot_hash"),
                            ],
                        ),
                    ),
                    assign("plot", plot),
                    expr(if_else(
                        is_policy("points_only"),
                        block(vec![assign(
                            "plot",
                            binary(
                                BinaryOp::Plus,
                                name("plot"),
                                gg(
                                    "geom_point",
                                    vec![
                                        named(
                                            "data",
                                            low_rows("points", dollar(name("points"), "low_n")),
                                        ),
                                        arg(gg(
                                            "aes",
                                            vec![
                                                named("y", name("value")),
                                                named("fill", name("treatment")),
                                            ],
                                        )),
                                        named("shape", integer(21)),
                                        named("size", number(1.6)),
                                    ],
                                ),
                            ),
                        )]),
                        None,
                    )),
                    expr(if_else(
                        is_policy("annotate"),
                        block(vec![assign(
                            "plot",
                            binary(
                                BinaryOp::Plus,
                                name("plot"),
                                gg(
                                    "geom_text",
                                    vec![
                                        named(
                                            "data",
                                            low_rows(
                                                "cells",
                                                binary(
                                                    BinaryOp::And,
                                                    dollar(name("cells"), "low_n"),
                                                    binary(
                                                        BinaryOp::Greater,
                                                        dollar(name("cells"), "n"),
                                                        integer(0),
                                                    ),
                                                ),
                                            ),
                                        ),
                                        arg(gg(
                                            "aes",
                                            vec![
                                                named("y", name("max")),
                                                named("label", string("low N")),
                                            ],
                                        )),
                                        named("vjust", number(-0.6)),
                                        named("size", number(3.0)),
                                    ],
                                ),
                            ),
                        )]),
                        None,
                    )),
                    assign("n_table", n_table),
                    expr(binary(
                        BinaryOp::Plus,
                        call(
                            "patchwork::wrap_plots",
                            vec![
                                arg(name("plot")),
                                arg(name("n_table")),
                                named("ncol", integer(1)),
                                named(
                                    "heights",
                                    call_positional("c", vec![number(6.0), number(1.0)]),
                                ),
                            ],
                        ),
                        call(
                            "patchwork::plot_annotation",
                            vec![
                                named("caption", name("caption")),
                                named(
                                    "theme",
                                    gg(
                                        "theme",
                                        vec![named(
                                            "plot.caption",
                                            gg(
                                                "element_text",
                                                vec![
                                                    named("hjust", number(0.0)),
                                                    named("family", string(FONT_FAMILY)),
                                                ],
                                            ),
                                        )],
                                    ),
                                ),
                            ],
                        ),
                    )),
                ],
            ),
        ),
    ]
}

fn json_number_function() -> Vec<RStatement> {
    let candidates = call_positional(
        "sprintf",
        vec![
            string("%.*g"),
            binary(BinaryOp::Range, integer(15), integer(17)),
            name("x"),
        ],
    );
    let as_json = |value: RExpr| {
        call(
            "structure",
            vec![arg(value), named("class", string("json"))],
        )
    };
    vec![
        comment(
            "A double as JSON text that reads back to the same double: the shortest of 15, 16\n\
             and 17 significant digits that round-trips; missing (and NaN) as null; JSON has no\n\
             infinities, so they are the strings \"Inf\" and \"-Inf\".",
        ),
        assign(
            "boxplot_json_number",
            function(
                &["x"],
                vec![
                    expr(if_else(
                        call_positional("is.na", vec![name("x")]),
                        call_positional("return", vec![as_json(string("null"))]),
                        None,
                    )),
                    expr(if_else(
                        call_positional("is.infinite", vec![name("x")]),
                        call_positional(
                            "return",
                            vec![as_json(if_else(
                                binary(BinaryOp::Greater, name("x"), integer(0)),
                                string("\"Inf\""),
                                Some(string("\"-Inf\"")),
                            ))],
                        ),
                        None,
                    )),
                    assign("candidates", candidates),
                    expr(as_json(element(
                        index(
                            name("candidates"),
                            vec![arg(binary(
                                BinaryOp::Equal,
                                call_positional("as.numeric", vec![name("candidates")]),
                                name("x"),
                            ))],
                        ),
                        integer(1),
                    ))),
                ],
            ),
        ),
    ]
}

fn statistics_json_function() -> Vec<RStatement> {
    let row_values = call_positional(
        "lapply",
        vec![
            call_positional("as.list", vec![index_rows(name("cells"), name("i"))]),
            lambda(
                &["value"],
                if_else(
                    call_positional("is.double", vec![name("value")]),
                    call_positional("boxplot_json_number", vec![name("value")]),
                    Some(name("value")),
                ),
            ),
        ],
    );
    vec![
        comment(
            "The statistics object as JSON (boxplot-statistics-v1): numbers exact, missing as null.",
        ),
        assign(
            "boxplot_statistics_json",
            function(
                &["statistics"],
                vec![
                    assign("cells", dollar(name("statistics"), "cells")),
                    RStatement::Assign(
                        dollar(name("statistics"), "cells"),
                        call_positional(
                            "lapply",
                            vec![
                                call_positional("seq_len", vec![call_positional("nrow", vec![name("cells")])]),
                                function(&["i"], vec![expr(row_values)]),
                            ],
                        ),
                    ),
                    expr(call(
                        "jsonlite::toJSON",
                        vec![
                            arg(name("statistics")),
                            named("auto_unbox", RExpr::Logical(true)),
                            named("json_verbatim", RExpr::Logical(true)),
                            named("na", string("null")),
                            named("null", string("null")),
                            named("digits", RExpr::Missing),
                        ],
                    )),
                ],
            ),
        ),
    ]
}

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
