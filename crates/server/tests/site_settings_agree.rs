//! Leptos.toml (read by the server at run time, `[package.metadata.leptos]`) and the workspace
//! Cargo.toml's `[[workspace.metadata.leptos]]` (read by cargo-leptos at build time) must hold
//! the same site settings: one source of truth.

fn document(file: &str) -> toml::Table {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(file);
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    text.parse()
        .unwrap_or_else(|err| panic!("{}: {err}", path.display()))
}

#[test]
fn leptos_toml_equals_cargo_toml_metadata() {
    let cargo = document("Cargo.toml")["workspace"]["metadata"]["leptos"]
        .as_array()
        .and_then(|projects| projects.first())
        .and_then(|project| project.as_table())
        .expect("Cargo.toml has no [[workspace.metadata.leptos]] table")
        .clone();
    let leptos = document("Leptos.toml")["package"]["metadata"]["leptos"]
        .as_table()
        .expect("Leptos.toml has no [package.metadata.leptos] table")
        .clone();
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
