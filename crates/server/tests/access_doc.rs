//! `docs/access.md` is generated from the access tables in the code (`api::access_markdown`):
//! this test fails when the committed document differs, and rewrites it when
//! `ADAMVIZ_UPDATE_DOCS=1` is set.

#[test]
fn docs_access_md_is_the_access_tables_of_the_code() {
    let path =
        std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("docs/access.md");
    let generated = adamviz::api::access_markdown();
    if std::env::var_os("ADAMVIZ_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/access.md is not what the code's access tables give: run \
         `ADAMVIZ_UPDATE_DOCS=1 cargo test -p adamviz-server --test access_doc` and commit it"
    );
    // The generated tables name every server function, route and page of the code.
    for (path, _) in adamviz::api::ACCESS
        .iter()
        .chain(adamviz::api::ROUTE_ACCESS)
        .chain(adamviz::api::PAGE_ACCESS)
    {
        assert!(generated.contains(&format!("| `{path}` |")), "{path}");
    }
}
