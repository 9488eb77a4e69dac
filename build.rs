//! Generates the two service clients, their shared enums and the operation table from
//! `spec/*.yaml` into `$OUT_DIR`; `src/lib.rs` includes them. The generator and its
//! transforms live in the `licensing-codegen` crate (`codegen/`), with their tests.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    // The guides (`docs/*.md`) are the docs of the module `guides`. A copy of the crate
    // without them (the spec-diff corpus in `spec-diff/corpus/` copies `src/`, this script
    // and the README) builds without that module rather than failing on a missing file.
    println!("cargo:rustc-check-cfg=cfg(licensing_guides)");
    if std::path::Path::new("docs").is_dir() {
        println!("cargo:rustc-cfg=licensing_guides");
    }
    licensing_codegen::build_script(&[
        ("order", "spec/order.yaml"),
        ("member", "spec/member.yaml"),
    ]);
}
