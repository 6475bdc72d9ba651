/* A stand-in for the CUDA driver (built as libcuda.so.1 in a directory of its own), enough for
 * the watch shim's CUDA check: cuDeviceGetCount answers CUDA_ERROR_NOT_INITIALIZED (3) until
 * cuInit ran, then one device, as the real driver does. */
static int initialised;

__attribute__((visibility("default"))) int cuInit(unsigned flags) {
  (void)flags;
  initialised = 1;
  return 0;
}

__attribute__((visibility("default"))) int cuDeviceGetCount(int* count) {
  if (!initialised) return 3;
  *count = 1;
  return 0;
}
