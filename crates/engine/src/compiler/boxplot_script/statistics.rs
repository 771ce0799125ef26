//! The script's statistics functions: `boxplot_cell_statistics` (n, subjects, missing, mean,
//! SD, median, type-7 quartiles, min, max and the low-N flag of one treatment × visit cell),
//! `boxplot_statistics` (every cell in the confirmed order), and the exact JSON writer the
//! detached script uses (`boxplot_json_number`, `boxplot_statistics_json`).

use super::field;
use crate::compiler::r_syntax::{build::*, BinaryOp, RExpr, RStatement};

fn na_real() -> RExpr {
    RExpr::MissingReal
}

fn if_any(n: RExpr, value: RExpr) -> RExpr {
    if_else(n, value, Some(na_real()))
}

/// `cell_statistics`: n, mean, SD, median and quartiles of one cell, as R computes them.
///
/// Long by design: it is one R function of the generated script, written as its syntax tree in
/// the order the script reads; split, one R function would be scattered over several Rust ones.
pub(super) fn cell_statistics_function() -> Vec<RStatement> {
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

/// `boxplot_statistics`: every cell's statistics and the exact JSON statistics.json holds.
///
/// Long by design: it is one R function of the generated script, written as its syntax tree in
/// the order the script reads; split, one R function would be scattered over several Rust ones.
pub(super) fn statistics_function() -> Vec<RStatement> {
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
                            named("version", string("boxplot-statistics-v2")),
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
                            named(
                                "records_per_subject_visit",
                                field("spec", &["records", "choice"]),
                            ),
                            named("cells", name("cells")),
                        ],
                    )),
                ],
            ),
        ),
    ]
}

pub(super) fn json_number_function() -> Vec<RStatement> {
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

pub(super) fn statistics_json_function() -> Vec<RStatement> {
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
            "The statistics object as JSON (boxplot-statistics-v2): numbers exact, missing as null.",
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
