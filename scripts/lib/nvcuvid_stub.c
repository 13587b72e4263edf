/* A libnvcuvid.so.1 without a decoder, for scripts/gstreamer-cuda-check: every entry
 * point answers CUDA_ERROR_NOT_SUPPORTED (801). GStreamer's nvcodec plugin (1.22)
 * registers its CUDA elements (cudaupload, cudaconvert, cudascale, ...) only when the
 * video decoder or encoder library of an NVIDIA driver loads; simtwin emulates neither,
 * and the elements this check runs use only the CUDA driver API. With this library the
 * plugin finds no decoder and registers no decoder element. */
#define NOT_SUPPORTED 801
#define STUB(name) int name(void) { return NOT_SUPPORTED; }
STUB(cuvidCreateDecoder)
STUB(cuvidCreateVideoParser)
STUB(cuvidCtxLock)
STUB(cuvidCtxLockCreate)
STUB(cuvidCtxLockDestroy)
STUB(cuvidCtxUnlock)
STUB(cuvidDecodePicture)
STUB(cuvidDestroyDecoder)
STUB(cuvidDestroyVideoParser)
STUB(cuvidGetDecoderCaps)
STUB(cuvidMapVideoFrame64)
STUB(cuvidParseVideoData)
STUB(cuvidUnmapVideoFrame64)
