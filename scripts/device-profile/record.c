/* Records a GPU as an emulated-driver device profile (emu-driver/profiles/*.txt): its
 * name, memory, driver version, every cuDeviceGetAttribute id 1..199 (value, or the
 * code the driver refused the id with) and the VMM granularity of a pinned device
 * allocation. Run on the GPU machine by scripts/device-profile/record. */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fail(const char *what, CUresult rc) {
    fprintf(stderr, "device-profile: %s failed: %d\n", what, (int)rc);
    return 1;
}

int main(int argc, char **argv) {
    int ordinal = argc > 1 ? atoi(argv[1]) : 0;
    CUresult rc = cuInit(0);
    if (rc != CUDA_SUCCESS) return fail("cuInit", rc);
    CUdevice dev;
    if ((rc = cuDeviceGet(&dev, ordinal)) != CUDA_SUCCESS) return fail("cuDeviceGet", rc);
    char name[256] = {0};
    if ((rc = cuDeviceGetName(name, sizeof name, dev)) != CUDA_SUCCESS) return fail("cuDeviceGetName", rc);
    size_t mem = 0;
    if ((rc = cuDeviceTotalMem(&mem, dev)) != CUDA_SUCCESS) return fail("cuDeviceTotalMem", rc);
    int version = 0;
    if ((rc = cuDriverGetVersion(&version)) != CUDA_SUCCESS) return fail("cuDriverGetVersion", rc);
    CUmemAllocationProp prop;
    memset(&prop, 0, sizeof prop);
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = ordinal;
    size_t gmin = 0, grec = 0;
    if ((rc = cuMemGetAllocationGranularity(&gmin, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM)) != CUDA_SUCCESS)
        return fail("cuMemGetAllocationGranularity (minimum)", rc);
    if ((rc = cuMemGetAllocationGranularity(&grec, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)) != CUDA_SUCCESS)
        return fail("cuMemGetAllocationGranularity (recommended)", rc);
    char day[16];
    time_t now = time(NULL);
    strftime(day, sizeof day, "%Y-%m-%d", gmtime(&now));
    printf("# cuDeviceGetAttribute for every attribute id 1..199 of an %s (device %d), driver version %d,\n", name, ordinal, version);
    printf("# read %s (scripts/device-profile/record). \"attr ID VALUE\", or \"attr ID rc=CODE\" where the driver\n", day);
    printf("# refused the id.\n");
    printf("name %s\ntotal_mem %zu\ndriver_version %d\n", name, mem, version);
    printf("max_ptx_version %d.%d\n", version / 1000 == 13 ? 9 : 8, version / 1000 == 13 ? (version % 1000) / 10 : 8);
    printf("# cuMemGetAllocationGranularity of a pinned device allocation: minimum, recommended.\n");
    printf("vmm_granularity %zu %zu\n", gmin, grec);
    for (int id = 1; id <= 199; id++) {
        int v = 0;
        CUresult r = cuDeviceGetAttribute(&v, (CUdevice_attribute)id, dev);
        if (r == CUDA_SUCCESS) printf("attr %d %d\n", id, v);
        else printf("attr %d rc=%d\n", id, (int)r);
    }
    return 0;
}
