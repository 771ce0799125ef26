//! The synthetic demo dataset: the shipped copy is the generator's output, it reads back, and the
//! whole first half of the flow works on it.

use adamviz_engine::ingest::demo::DEMO_SUBJECTS_PER_ARM;
use adamviz_engine::ingest::{
    confirm::confirm_spec,
    csv::{read_csv, write_table_csv},
    demo::generate_demo_table,
    profile::profile_table,
    read_dataset,
    snapshot::take_snapshot,
    table::ColumnData,
    xpt_writer::write_xpt,
};
use adamviz_model::digest::Sha256Digest;
use sha2::{Digest, Sha256};

#[test]
fn the_shipped_demo_file_is_exactly_the_generator_output() {
    let shipped = std::fs::read(concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/public/demo/adlb-synthetic.xpt"
    ))
    .expect("public/demo/adlb-synthetic.xpt is shipped");
    let generated = write_xpt(&generate_demo_table(DEMO_SUBJECTS_PER_ARM));
    assert!(
        shipped == generated,
        "regenerate it: adamviz demo-data --out public/demo/adlb-synthetic.xpt"
    );
    // The file declares each character variable's length; the generated table declares none.
    let mut read = read_dataset(&shipped).unwrap();
    for column in &mut read.columns {
        column.declared = Default::default();
    }
    assert_eq!(read, generate_demo_table(DEMO_SUBJECTS_PER_ARM));
}

#[test]
fn the_demo_dataset_goes_from_question_to_snapshot() {
    let bytes = write_xpt(&generate_demo_table(DEMO_SUBJECTS_PER_ARM));
    let hash = Sha256Digest::from_bytes(Sha256::digest(&bytes).into());
    let table = read_dataset(&bytes).unwrap();
    let profile = profile_table(&table, hash, 5);
    let draft = adamviz_engine::ingest::draft::draft_spec("ALT over time by arm", &profile, &table)
        .unwrap()
        .spec;
    assert_eq!(
        draft.treatment.levels,
        ["Placebo", "Drug Low Dose", "Drug High Dose"]
    );
    assert_eq!(
        draft.visit.visits,
        ["Baseline", "Week 2", "Week 4", "Week 8", "Week 12"]
    );
    assert_eq!(draft.unit.as_deref(), Some("U/L"));
    let spec = confirm_spec(&draft, &table, hash).unwrap();
    let snapshot = take_snapshot(&spec, &table).unwrap();
    // 19 safety subjects per arm at baseline (one per arm is outside the safety population).
    let baseline_rows = snapshot
        .rows
        .iter()
        .filter(|r| {
            r[2] == adamviz_engine::ingest::snapshot::SnapshotValue::Text("Baseline".into())
        })
        .count();
    assert_eq!(baseline_rows, 3 * (DEMO_SUBJECTS_PER_ARM - 1));
}

#[test]
fn csv_written_from_a_table_reads_back_to_the_same_values() {
    let table = generate_demo_table(5);
    let mut csv = Vec::new();
    write_table_csv(&table, &mut csv).unwrap();
    let back = read_csv(&csv).unwrap();
    assert_eq!(back.row_count, table.row_count);
    for (original, read) in table.columns.iter().zip(&back.columns) {
        assert_eq!(original.name, read.name);
        match (&original.data, &read.data) {
            (ColumnData::Numeric(a), ColumnData::Numeric(b)) => {
                assert_eq!(a, b, "{}", original.name)
            }
            (ColumnData::Character(a), ColumnData::Character(b)) => {
                assert_eq!(a, b, "{}", original.name)
            }
            _ => panic!("{} changed type", original.name),
        }
    }
}
