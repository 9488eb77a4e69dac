//! Generates the two service clients, their shared enums and the operation table from
//! `spec/*.yaml` into `$OUT_DIR`; `src/lib.rs` includes them. The generator and its
//! transforms live in the `licensing-codegen` crate (`codegen/`), with their tests.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    licensing_codegen::build_script(&[
        ("order", "spec/order.yaml"),
        ("member", "spec/member.yaml"),
    ]);
}
