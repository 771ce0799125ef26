//! Each rule of the proposed treatment order on a small table: the own order variable, a
//! related one that matches the labels, placebo and doses, first appearance; and the related
//! variables that must not be used.

use super::*;
use crate::ingest::csv::read_csv;

/// A subject-level-like table: one row per (subject, label), in the order given.
fn table(header: &str, rows: &[&str]) -> Table {
    let mut text = format!("{header}\n");
    for row in rows {
        text.push_str(row);
        text.push('\n');
    }
    read_csv(text.as_bytes()).unwrap()
}

fn levels(table: &Table, column: &str) -> (Vec<String>, Option<String>, String) {
    let of = treatment_levels(table, column).unwrap();
    (of.levels, of.order_column, of.order_why)
}

#[test]
fn the_own_order_variable_orders_first() {
    let data = table(
        "USUBJID,TRTA,TRTAN,TRT01AN,TRT01A",
        &["1,High,2,0,High", "2,Low,1,1,Low", "3,Placebo,0,2,Placebo"],
    );
    assert_eq!(
        levels(&data, "TRTA"),
        (
            vec!["Placebo".into(), "Low".into(), "High".into()],
            Some("TRTAN".into()),
            "levels ordered by TRTAN".into()
        )
    );
}

#[test]
fn a_related_order_variable_with_matching_labels_orders_without_one() {
    let data = table(
        "USUBJID,TRTA,TRT01A,TRT01AN,ARM,ARMN",
        &[
            "1,Xanomeline High Dose,Xanomeline High Dose,81,Xanomeline High Dose,3",
            "2,Placebo,Placebo,0,Placebo,1",
            "3,Xanomeline Low Dose,Xanomeline Low Dose,54,Xanomeline Low Dose,2",
            "4,Placebo,Placebo,0,Placebo,1",
        ],
    );
    assert_eq!(
        levels(&data, "TRTA"),
        (
            vec![
                "Placebo".into(),
                "Xanomeline Low Dose".into(),
                "Xanomeline High Dose".into()
            ],
            Some("TRT01AN".into()),
            "levels ordered by TRT01AN, which matches TRTA's labels one to one (there is no TRTAN)"
                .into()
        )
    );
    // ARM has its own ARMN; ACTARM would use a related one.
    assert_eq!(levels(&data, "ARM").1.as_deref(), Some("ARMN"));
}

#[test]
fn a_related_variable_that_does_not_match_is_passed_over() {
    // A crossover: TRTA changes within a subject, TRT01AN (period 1) does not, so one TRTA
    // label has two TRT01AN values. ARMN's twin ARM carries other labels. Neither orders TRTA.
    let data = table(
        "USUBJID,TRTA,TRT01A,TRT01AN,ARM,ARMN",
        &[
            "1,Drug 20 mg,Drug 20 mg,2,Sequence B,2",
            "1,Drug 10 mg,Drug 20 mg,2,Sequence B,2",
            "2,Drug 10 mg,Drug 10 mg,1,Sequence A,1",
            "2,Drug 20 mg,Drug 10 mg,1,Sequence A,1",
        ],
    );
    let (order, column, why) = levels(&data, "TRTA");
    assert_eq!(column, None);
    assert_eq!(order, ["Drug 10 mg", "Drug 20 mg"]);
    assert_eq!(
        why,
        "levels with doses ascending (10 mg, 20 mg): there is no TRTAN and no related order variable"
    );
    // Two labels sharing one number is not one to one either.
    let shared = table("USUBJID,TRTA,TRT01A,TRT01AN", &["1,B,B,1", "2,A,A,1"]);
    assert_eq!(levels(&shared, "TRTA").1, None);
}

#[test]
fn placebo_first_and_doses_ascending_when_the_labels_carry_doses() {
    let data = table(
        "USUBJID,TRTA",
        &["1,Drug 81 mg", "2,Drug 54 mg", "3,Placebo", "4,Drug 81 mg"],
    );
    assert_eq!(
        levels(&data, "TRTA"),
        (
            vec!["Placebo".into(), "Drug 54 mg".into(), "Drug 81 mg".into()],
            None,
            "levels with Placebo first, then doses ascending (54 mg, 81 mg): there is no TRTAN and no related order variable"
                .into()
        )
    );
}

#[test]
fn otherwise_the_order_of_first_appearance() {
    let data = table("USUBJID,TRTA", &["1,Zeta", "2,Alpha", "3,Zeta", "4,Mu"]);
    assert_eq!(
        levels(&data, "TRTA"),
        (
            vec!["Zeta".into(), "Alpha".into(), "Mu".into()],
            None,
            "levels in order of first appearance: no order variable (TRTAN or a related one) and no placebo or doses in the labels"
                .into()
        )
    );
}
