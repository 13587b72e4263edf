# Parameter types of the VMAF fork's kernels bisected here (extern "C" symbols), for
# parity bisect --types. A struct passed by value that holds the buffer's pointer
# (VmafCudaBuffer, VmafPicture) is written as a pointer to the buffer's element type.
float_ansnr_kernel_8bpc(const uint8_t *ref, const uint8_t *dis, ptrdiff_t ref_stride, ptrdiff_t dis_stride, float *partials, unsigned width, unsigned height)
calculate_ciede_kernel_8bpc(const void *ref, const void *dis, float *sum, unsigned width, unsigned height, unsigned bpc, unsigned ss_hor, unsigned ss_ver)
calculate_ssim_horiz_8bpc(const void *ref, const void *cmp, float *h_ref_mu, float *h_cmp_mu, float *h_ref_sq, float *h_cmp_sq, float *h_refcmp, unsigned w_horiz, unsigned h_horiz, unsigned width)
float_motion_kernel_8bpc(const uint8_t *ref, ptrdiff_t ref_stride, float *cur_blur, const float *prev_blur, float *sad, unsigned width, unsigned height, unsigned compute_sad)
psnr_hvs(float *ref_in, float *dist_in, float *partials_out, unsigned width, unsigned height, unsigned num_blocks_x, unsigned num_blocks_y, int plane, int bpc)
float_vif_compute(int scale, const uint8_t *ref_raw, const uint8_t *dis_raw, ptrdiff_t raw_stride, const float *ref_f, const float *dis_f, ptrdiff_t f_stride_floats, float *num_partials, float *den_partials, unsigned width, unsigned height, unsigned bpc, unsigned grid_x_count)
ms_ssim_decimate(float *src, float *dst, unsigned w, unsigned h, unsigned w_out, unsigned h_out)
