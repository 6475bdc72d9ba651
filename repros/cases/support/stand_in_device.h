// A non-CPU device backend that stands in for CUDA/MPS on a CPU-only libtorch: a device guard for
// PrivateUse1 that reports one device. Autograd starts a device thread for it on the first
// backward() and, because it created threads, arms its own fork check (pthread_atfork child
// handler). Nothing runs on the device: only autograd's bookkeeping sees it.
#pragma once

namespace fc {

// Registers the stand-in once in this process (idempotent).
void register_stand_in_device();

// Non-CPU devices that a real backend (CUDA, MPS, XPU...) reports here, the stand-in excluded.
int real_accelerator_devices();

}  // namespace fc
