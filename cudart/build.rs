// The installed name is libcudart.so.13, so that is the SONAME; every exported entry point
// carries the version node `libcudart.so.13` as NVIDIA's library's do (executables built
// with `-cudart shared` ask for `cudaMalloc@libcudart.so.13`).
fn main() {
    let map = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("exports.map");
    println!("cargo:rerun-if-changed={}", map.display());
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libcudart.so.13");
    println!("cargo:rustc-cdylib-link-arg=-Wl,--version-script={}", map.display());
}
