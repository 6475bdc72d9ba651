#include "cases/support/stand_in_device.h"

#include <c10/core/impl/DeviceGuardImplInterface.h>

#include <atomic>

namespace fc {
namespace {

using c10::Device;
using c10::DeviceIndex;
using c10::DeviceType;
using c10::Stream;

struct StandInGuard final : c10::impl::DeviceGuardImplInterface {
  DeviceType type() const override { return DeviceType::PrivateUse1; }
  Device exchangeDevice(Device d) const override {
    Device old(type(), current_.exchange(d.index()));
    return old;
  }
  Device getDevice() const override { return {type(), current_.load()}; }
  void setDevice(Device d) const override { current_ = d.index(); }
  void uncheckedSetDevice(Device d) const noexcept override { current_ = d.index(); }
  Stream getStream(Device d) const noexcept override { return Stream(Stream::DEFAULT, d); }
  Stream exchangeStream(Stream s) const noexcept override { return s; }
  DeviceIndex deviceCount() const noexcept override { return 1; }

  mutable std::atomic<DeviceIndex> current_{0};
};

}  // namespace

void register_stand_in_device() {
  static StandInGuard guard;
  static c10::impl::DeviceGuardImplRegistrar registrar(DeviceType::PrivateUse1, &guard);
}

int real_accelerator_devices() {
  int n = 0;
  for (size_t i = 0; i < static_cast<size_t>(DeviceType::COMPILE_TIME_MAX_DEVICE_TYPES); ++i) {
    auto type = static_cast<DeviceType>(i);
    // CPU-like types run on autograd's CPU queue and never get device threads.
    if (type == DeviceType::CPU || type == DeviceType::Meta || type == DeviceType::Lazy ||
        type == DeviceType::PrivateUse1)
      continue;
    const auto* impl = c10::impl::device_guard_impl_registry[i].load();
    if (impl) n += impl->deviceCount();
  }
  return n;
}

}  // namespace fc
