//! Generates the `statekeeper.v1` prost messages and tonic clients from the
//! contract in `../../proto` into `OUT_DIR` (included by `src/lib.rs`), so no
//! generated code is committed and building needs nothing but cargo: protoc
//! comes from the protoc-bin-vendored crate, together with the well-known
//! types (`google/protobuf/*.proto`) it ships.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let contract = PathBuf::from("../../proto");
    // Vendored protos the contract imports (google/api/field_behavior.proto).
    let third_party = PathBuf::from("../../third_party");
    let mut protos: Vec<PathBuf> = std::fs::read_dir(contract.join("statekeeper/v1"))?
        .map(|entry| entry.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    protos.retain(|p| p.extension().is_some_and(|ext| ext == "proto"));
    // Sorted so the generated code does not depend on the directory order.
    protos.sort();

    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    // Implements prost::Name (full names and type URLs, e.g. to pack into Any).
    config.enable_type_names();
    tonic_prost_build::configure()
        .build_server(false)
        .compile_with_config(
            config,
            &protos,
            &[
                contract.clone(),
                third_party.clone(),
                protoc_bin_vendored::include_path()?,
            ],
        )?;
    // Regenerate when a proto changes, is added or is removed.
    println!("cargo:rerun-if-changed={}", contract.display());
    println!("cargo:rerun-if-changed={}", third_party.display());
    for proto in &protos {
        println!("cargo:rerun-if-changed={}", proto.display());
    }
    Ok(())
}
