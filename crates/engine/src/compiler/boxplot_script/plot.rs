//! The script's `boxplot_plot` function, in its parts: the records as points with their cell's
//! low-N flag, the boxplot panels (one per treatment), the low-N policy drawn on them, the
//! N-per-cell table under the panels, and the caption with the footnote and hash prefixes.
//! Each part is a function returning the R it adds; `plot_function` puts them in order.

use super::{field, FONT_FAMILY, PALETTE};
use crate::compiler::r_syntax::{build::*, BinaryOp, RArg, RExpr, RStatement};

/// `ggplot2::<function>(args…)`.
fn gg(function: &str, args: Vec<RArg>) -> RExpr {
    call(&format!("ggplot2::{function}"), args)
}

/// One panel per treatment, in a row, empty levels kept.
fn facets(extra: Vec<RArg>) -> RExpr {
    let mut args = vec![
        arg(gg("vars", vec![arg(name("treatment"))])),
        named("nrow", integer(1)),
        named("drop", RExpr::Logical(false)),
    ];
    args.extend(extra);
    gg("facet_wrap", args)
}

fn theme_base(size: f64) -> RExpr {
    gg(
        "theme_bw",
        vec![
            named("base_size", number(size)),
            named("base_family", string(FONT_FAMILY)),
        ],
    )
}

/// `identical(below, "<policy>")`.
fn is_policy(policy: &str) -> RExpr {
    call_positional("identical", vec![name("below"), string(policy)])
}

fn low_rows(table: &str, condition: RExpr) -> RExpr {
    index_rows(name(table), condition)
}

fn factor_of(values: RExpr, levels: &str) -> RExpr {
    call("factor", vec![arg(values), named("levels", name(levels))])
}

/// `data[[spec$…]]`: the column the spec names.
fn column(path: &[&str]) -> RExpr {
    element(name("data"), field("spec", path))
}

/// The records as points (treatment and visit as factors in the confirmed order, missing
/// values dropped), the cells likewise, and each point's cell's low-N flag.
fn points_and_cells() -> Vec<RStatement> {
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
        comment("Cells are ordered treatment by treatment, so this is each point's cell."),
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
                    call_positional("as.integer", vec![dollar(name("points"), "visit")]),
                ))],
            ),
        ),
    ]
}

/// The points that get boxes, the palette, the y-axis label, the footnote and the caption.
fn boxes_palette_and_labels() -> Vec<RStatement> {
    let prefix = |path: &str| {
        call_positional(
            "substr",
            vec![field("spec", &[path]), integer(1), integer(12)],
        )
    };
    vec![
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
        assign("footnote", footnote()),
        expr(if_else(
            call_positional(
                "identical",
                vec![field("spec", &["records", "keep"]), string("every")],
            ),
            block(vec![assign(
                "footnote",
                call_positional(
                    "paste0",
                    vec![
                        name("footnote"),
                        string(
                            "\nEvery record per subject and visit is kept: a box pools several records of a subject; N shows subjects (records).",
                        ),
                    ],
                ),
            )]),
            None,
        )),
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
    ]
}

/// What the footnote says of the low-N policy in force.
fn footnote() -> RExpr {
    let threshold_text = || field("spec", &["low_n", "threshold"]);
    let sentence = |before: &str, after: &str| {
        call_positional(
            "paste0",
            vec![string(before), threshold_text(), string(after)],
        )
    };
    call(
        "switch",
        vec![
            arg(name("below")),
            named(
                "annotate",
                sentence("Boxes marked \"low N\" have fewer than ", " subjects."),
            ),
            named(
                "points_only",
                sentence(
                    "Cells with fewer than ",
                    " subjects show their individual values only.",
                ),
            ),
            named(
                "suppress_box",
                sentence(
                    "Cells with fewer than ",
                    " subjects are not drawn; their N is in the table.",
                ),
            ),
        ],
    )
}

/// The boxplot panels: value by visit, one panel per treatment, fixed or free y-scales.
fn boxplot_panels() -> RExpr {
    layers(
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
    )
}

/// `if (<policy>) { plot <- plot + <layer> }`.
fn layer_for_policy(policy: &str, layer: RExpr) -> RStatement {
    expr(if_else(
        is_policy(policy),
        block(vec![assign(
            "plot",
            binary(BinaryOp::Plus, name("plot"), layer),
        )]),
        None,
    ))
}

/// `points_only`: the low-N cells' values as points.
fn low_n_points() -> RStatement {
    layer_for_policy(
        "points_only",
        gg(
            "geom_point",
            vec![
                named("data", low_rows("points", dollar(name("points"), "low_n"))),
                arg(gg(
                    "aes",
                    vec![named("y", name("value")), named("fill", name("treatment"))],
                )),
                named("shape", integer(21)),
                named("size", number(1.6)),
            ],
        ),
    )
}

/// `annotate`: "low N" above each low-N box that has values.
fn low_n_annotations() -> RStatement {
    layer_for_policy(
        "annotate",
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
                            binary(BinaryOp::Greater, dollar(name("cells"), "n"), integer(0)),
                        ),
                    ),
                ),
                arg(gg(
                    "aes",
                    vec![named("y", name("max")), named("label", string("low N"))],
                )),
                named("vjust", number(-0.6)),
                named("size", number(3.0)),
            ],
        ),
    )
}

/// Each cell's N as the table shows it: subjects, and the records in parentheses whenever
/// they differ (several records of a subject at a visit); the row is then labelled so.
fn n_labels() -> Vec<RStatement> {
    let differs = binary(
        BinaryOp::NotEqual,
        dollar(name("cells"), "n"),
        dollar(name("cells"), "n_subjects"),
    );
    vec![
        RStatement::Assign(
            dollar(name("cells"), "n_label"),
            call_positional(
                "ifelse",
                vec![
                    differs.clone(),
                    call_positional(
                        "paste0",
                        vec![
                            dollar(name("cells"), "n_subjects"),
                            string("\n("),
                            dollar(name("cells"), "n"),
                            string(")"),
                        ],
                    ),
                    call_positional("as.character", vec![dollar(name("cells"), "n_subjects")]),
                ],
            ),
        ),
        assign(
            "n_row_label",
            if_else(
                call_positional("any", vec![differs]),
                string("N subjects (records)"),
                Some(string("N")),
            ),
        ),
    ]
}

/// The N per cell (subjects), as a row of text aligned under the panels.
fn n_table() -> RExpr {
    layers(
        gg(
            "ggplot",
            vec![
                arg(name("cells")),
                arg(gg(
                    "aes",
                    vec![
                        named("x", name("visit")),
                        named("y", name("n_row_label")),
                        named("label", name("n_label")),
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
    )
}

/// The panels over the N table, with the caption: the function's value.
fn panels_over_table() -> RStatement {
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
    ))
}

/// `boxplot_plot <- function(data, statistics, spec) { … }`.
pub(super) fn plot_function() -> Vec<RStatement> {
    let mut body = points_and_cells();
    body.extend(boxes_palette_and_labels());
    body.extend([
        assign("plot", boxplot_panels()),
        low_n_points(),
        low_n_annotations(),
    ]);
    body.extend(n_labels());
    body.extend([assign("n_table", n_table()), panels_over_table()]);
    vec![
        comment(
            "The plot object: boxplots of the value by visit, one panel per treatment, the\n\
             low-N policy drawn visibly, and the N per cell (subjects) in a table aligned under\n\
             the panels. No randomness: points are never jittered.",
        ),
        assign(
            "boxplot_plot",
            function(&["data", "statistics", "spec"], body),
        ),
    ]
}
