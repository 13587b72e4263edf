/* An independent reference of upstream VMAF's motion_cuda arithmetic (8-bit), for
 * telling simtwin's fidelity apart from an upstream CPU/CUDA difference.
 *
 * Upstream's CPU `motion` extractor (integer_motion.c, since 2026: "pipelined v2") blurs
 * the difference of two frames once and mirrors borders as 2n-i-2; the CUDA kernel
 * (calculate_motion_score_kernel_8bpc) blurs each frame on its own, rounds it to u16,
 * subtracts, and mirrors as 2n-i-1. The two are not meant to agree bit for bit. This
 * program recomputes what the CUDA extractor computes, from its definition:
 *
 *   per pixel: by(xf) = sum_yf f[yf] * Y[m(y-2+yf, H)][m(x-2+xf, W)]   (u32)
 *              b = (sum_xf f[xf] * ((by(xf) + 128) >> 8) + 32768) >> 16
 *   m(i, n) = |i| if |i| < n else n - (|i| - n + 1);  f = {3571, 16004, 26386, 16004, 3571}
 *   sad(i)   = sum |b_i - b_(i-1)|  (u64);  s(i) = (float)(sad / 256.) / (float)(W*H)
 *   motion2(0) = 0; motion2(i) = min(s(i), s(i+1)) for 0 < i < last; motion2(last) = s(last)
 *
 * on the reference clip's luma, and prints one JSON document in VMAF's shape
 * (frames[].metrics.integer_motion2, %.6f as VMAF prints it).
 *
 * Usage: motion-cuda-ref REF.yuv WIDTH HEIGHT FRAMES > out.json  (8-bit 4:2:0)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const uint32_t filt[5] = {3571, 16004, 26386, 16004, 3571};

static int mirror(int i, int n) {
    int o = abs(i);
    return o < n ? o : n - (o - n + 1);
}

static void blur(const uint8_t *y, int w, int h, uint16_t *out) {
    for (int r = 0; r < h; r++)
        for (int c = 0; c < w; c++) {
            uint32_t b = 0;
            for (int xf = 0; xf < 5; xf++) {
                uint32_t by = 0;
                for (int yf = 0; yf < 5; yf++)
                    by += filt[yf] * y[(size_t)mirror(r - 2 + yf, h) * w + mirror(c - 2 + xf, w)];
                b += filt[xf] * ((by + 128u) >> 8);
            }
            out[(size_t)r * w + c] = (uint16_t)((b + 32768u) >> 16);
        }
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: motion-cuda-ref REF.yuv WIDTH HEIGHT FRAMES\n");
        return 2;
    }
    int w = atoi(argv[2]), h = atoi(argv[3]), n = atoi(argv[4]);
    if (w <= 4 || h <= 4 || n < 2) {
        fprintf(stderr, "motion-cuda-ref: bad size or frame count\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        perror(argv[1]);
        return 2;
    }
    size_t luma = (size_t)w * h, frame = luma + 2 * (size_t)((w + 1) / 2) * ((h + 1) / 2);
    uint8_t *buf = malloc(frame);
    uint16_t *b[2] = {malloc(luma * 2), malloc(luma * 2)};
    float *s = calloc(n, sizeof(float));
    if (!buf || !b[0] || !b[1] || !s) return 2;
    for (int i = 0; i < n; i++) {
        if (fread(buf, 1, frame, f) != frame) {
            fprintf(stderr, "motion-cuda-ref: %s holds fewer than %d frames\n", argv[1], n);
            return 2;
        }
        blur(buf, w, h, b[i % 2]);
        if (i == 0) continue;
        uint64_t sad = 0;
        for (size_t k = 0; k < luma; k++) sad += (uint64_t)abs((int)b[i % 2][k] - (int)b[(i + 1) % 2][k]);
        s[i] = (float)(sad / 256.) / (float)(unsigned)(w * h);
    }
    fclose(f);
    printf("{\n  \"version\": \"motion-cuda-ref\",\n  \"frames\": [");
    for (int i = 0; i < n; i++) {
        double m2 = i == 0 ? 0.0 : (i == n - 1 ? s[i] : (s[i] < s[i + 1] ? s[i] : s[i + 1]));
        printf("%s\n    {\"frameNum\": %d, \"metrics\": {\"integer_motion2\": %.6f}}", i ? "," : "", i, m2);
    }
    printf("\n  ]\n}\n");
    return 0;
}
