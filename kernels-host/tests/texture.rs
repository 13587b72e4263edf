//! Texture and surface functions (`simtwin/texture.h`): every call reaches the runtime
//! table's `texture` entry with the request the driver's sampler expects (operation,
//! geometry, coordinates, layer, level, component, result type, surface size and
//! boundary mode), and the answer comes back as the result type's components.

mod common;
use common::*;
use kernels_host::build::{build, BuildOptions};
use kernels_host::module::{ffi, LoadedModule};

#[test]
fn texture_functions_send_the_requests_the_sampler_expects() {
    let _g = serial();
    let dir = tempfile::tempdir().unwrap();
    let b = build(&BuildOptions::new(dir.path(), vec![cu("texture.cu")])).unwrap_or_else(|e| panic!("{e}")).remove(0);
    let m = LoadedModule::open(&b.library).unwrap();
    unsafe { m.bind(&RUNTIME) };
    TEXTURES.lock().unwrap().clear();
    let (mut t, mut s) = (0x77u64, 0x99u64);
    let mut out = [0u32; 7];
    let mut po = out.as_mut_ptr();
    launch(&m, "tex_calls", 1, &[arg(&mut t), arg(&mut s), arg(&mut po)], &mut []);
    let r = TEXTURES.lock().unwrap().clone();
    assert_eq!(r.len(), 8, "{r:?}");
    use ffi::tex;
    // tex2D<float4>
    assert_eq!(
        (r[0].op, r[0].geometry, r[0].handle, r[0].coord[0], r[0].coord[1], r[0].result),
        (tex::FETCH, tex::G_2D, 0x77, 1.5, 2.5, tex::R_F32)
    );
    // tex1Dfetch<int4>: integer coordinates
    assert_eq!((r[1].flags, r[1].icoord[0], r[1].result), (tex::INT_COORDS, 7, tex::R_S32));
    // tex2DLayered<uchar2>: layer in icoord[3], unsigned result
    assert_eq!((r[2].geometry, r[2].icoord[3], r[2].result), (tex::G_A2D, 3, tex::R_U32));
    // tex2DLod
    assert_eq!((r[3].op, r[3].lod), (tex::LEVEL, 1.75));
    // tex2Dgather component 2
    assert_eq!((r[4].op, r[4].component), (tex::GATHER, 2));
    // texCubemap: a direction
    assert_eq!((r[5].geometry, r[5].coord[0], r[5].coord[1], r[5].coord[2]), (tex::G_CUBE, 1.0, -0.5, 0.25));
    // surf2Dread<unsigned>, clamp: byte x, row, 4 bytes
    assert_eq!((r[6].op, r[6].handle, r[6].icoord[0], r[6].icoord[1], r[6].size, r[6].clamp), (tex::SURF_LOAD, 0x99, 8, 2, 4, tex::CLAMP));
    // surf2DLayeredwrite(ushort2), zero: the value's 4 bytes in data
    assert_eq!(
        (r[7].op, r[7].geometry, r[7].icoord[3], r[7].size, r[7].clamp, r[7].data[0]),
        (tex::SURF_STORE, tex::G_A2D, 2, 4, tex::ZERO, 0x5678_1234)
    );
    // The answers, as each result type takes them: the test runtime answers
    // (handle, op, geometry, coord[0] bits).
    assert_eq!(out[0], 0x77, "float4.x is word 0's bits");
    assert_eq!(out[1], tex::FETCH, "int4.y is word 1");
    assert_eq!(out[2], 0x77, "uchar2.x is word 0, truncated");
    assert_eq!(out[3], 0x77, "float is word 0");
    assert_eq!(out[4], 0.5f32.to_bits(), "gather's w is word 3: coord[0]");
    assert_eq!(out[5], 0x77);
    assert_eq!(out[6], 0x99, "surface reads return the driver's bytes");
}
