//! Leptos.toml (read by the server at run time) and Cargo.toml's `[package.metadata.leptos]`
//! (read by cargo-leptos at build time) must hold the same site settings: one source of truth.

fn leptos_table(file: &str) -> toml::Table {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    let document: toml::Table = text
        .parse()
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    document["package"]["metadata"]["leptos"]
        .as_table()
        .unwrap_or_else(|| panic!("{file} has no [package.metadata.leptos] table"))
        .clone()
}

#[test]
fn leptos_toml_equals_cargo_toml_metadata() {
    let cargo = leptos_table("Cargo.toml");
    let leptos = leptos_table("Leptos.toml");
    for (key, value) in &cargo {
        assert_eq!(
            leptos.get(key),
            Some(value),
            "Leptos.toml differs from Cargo.toml at `{key}`"
        );
    }
    for key in leptos.keys() {
        assert!(
            cargo.contains_key(key),
            "Leptos.toml has `{key}`, Cargo.toml does not"
        );
    }
    assert_eq!(cargo["output-name"].as_str(), Some("adamviz"));
}
