//! Writes a later data cut of an ADaM laboratory dataset (see `tests/support/data_cut.rs`): some
//! subjects given Week 26 records, one ALT value corrected; the same dataset name, other bytes.
//!
//! `cargo run -p adamviz-server --example new_data_cut -- IN.xpt OUT.xpt [SUBJECTS]` prints what it
//! changed as JSON, so that a test can say exactly which cells of a figure must change. The
//! browser tests use it.

#[path = "../tests/support/data_cut.rs"]
mod data_cut;

use anyhow::{bail, Context};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output, rest @ ..] = args.as_slice() else {
        bail!("usage: new_data_cut IN.xpt OUT.xpt [SUBJECTS]");
    };
    let wanted: usize = rest.first().map_or(Ok(3), |n| n.parse())?;
    let bytes = std::fs::read(input).with_context(|| format!("cannot read {input}"))?;
    let (cut, summary) = data_cut::new_cut(&bytes, wanted)?;
    std::fs::write(output, cut).with_context(|| format!("cannot write {output}"))?;
    println!("{}", serde_json::to_string(&summary)?);
    Ok(())
}
