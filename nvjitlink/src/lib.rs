//! simtwin's `libnvJitLink.so.13`: NVIDIA's nvJitLink C API (nvJitLinkCreate, AddData,
//! AddFile, Complete, GetLinkedCubin, the logs, ...) for the emulated driver.
//!
//! Programs that link device code through nvJitLink (numba-cuda through cuda.core, NVRTC
//! programs that link separately compiled PTX) get from NVIDIA's library a SASS cubin,
//! which the emulated driver cannot run. This library links the same inputs the way the
//! emulated driver's own JIT linker (cuLinkCreate/cuLinkComplete) does: PTX inputs are kept
//! whole, and "the linked cubin" is a simtwin linked image (`simtwin_abi::linked`, the same
//! bytes cuLinkComplete writes) that the emulated cuModuleLoadData / cuLibraryLoadData run
//! in PTX mode, translating and linking the modules together at load.
//!
//! What cannot be linked, with a line in the error log naming the input and why:
//! LTO-IR (NVVM IR: simtwin runs PTX; NVJITLINK_ERROR_LTO_NOT_ENABLED without `-lto`,
//! NVJITLINK_ERROR_NVVM_COMPILE with it), and cubins, host objects and fatbins unless their bytes
//! are PTX text (NVJITLINK_ERROR_INVALID_INPUT: this library does not pull in the driver's
//! image reader, whose crate exports the cu* API). nvJitLinkGetLinkedPtx answers the PTX
//! when the link had one module (there is no merged PTX of several). nvJitLinkVersion says
//! 12.2, so that numba-cuda does not ask for LTO (`link::VERSION`; SIMTWIN_NVJITLINK_VERSION
//! overrides it). Library inputs (ar archives: libcudadevrt.a, which numba-cuda links for
//! grid groups) follow static-library semantics at nvJitLinkComplete
//! (`simtwin_abi::devrt`): unused when the PTX leaves nothing undefined, libcudadevrt.a's
//! cooperative-groups entry points from simtwin's PTX, and NVJITLINK_ERROR_INVALID_INPUT
//! naming the symbol and the archive for anything else only its SASS could define.
//!
//! `ffi` holds the C boundary and all unsafe code; `link` the rest.

mod ffi;
pub mod link;
