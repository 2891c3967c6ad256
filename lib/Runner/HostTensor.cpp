//===- HostTensor.cpp - strided host tensors for attn-run -----------------===//
//
// f16/bf16 rounding in software (bit-exact, no compiler or CPU support
// needed) and the host tensors attn-run fills and checks.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/HostTensor.h"

#include <cstring>
#include <fstream>
#include <sys/resource.h>
#include <unistd.h>
#include <limits>
#include <stdexcept>

using namespace attn;

//===----------------------------------------------------------------------===//
// f16 / bf16 conversions
//===----------------------------------------------------------------------===//

namespace {

/// Rounds a double to a binary floating-point format with `expBits`
/// exponent bits and `mantBits` stored mantissa bits (at most 16 bits in
/// all), to nearest with ties to even. Returns the encoding.
uint16_t roundToSmallFloat(double value, int expBits, int mantBits) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  const uint64_t sign = (bits >> 63) << (expBits + mantBits);
  const int exp = int((bits >> 52) & 0x7ff);
  const uint64_t mant = bits & ((uint64_t(1) << 52) - 1);
  const uint64_t expMask = ((uint64_t(1) << expBits) - 1) << mantBits;

  if (exp == 0x7ff) {
    if (mant == 0)
      return uint16_t(sign | expMask); // +-inf
    // NaN: keep the top payload bits and force the quiet bit, so the
    // result is a NaN even when the kept payload bits are all zero.
    const uint64_t quiet = uint64_t(1) << (mantBits - 1);
    return uint16_t(sign | expMask | quiet | (mant >> (52 - mantBits)));
  }
  // Zero or a double subnormal (< 2^-1022): far below half the smallest
  // subnormal of either target format.
  if (exp == 0)
    return uint16_t(sign);

  const int bias = (1 << (expBits - 1)) - 1;
  int targetExp = exp - 1023 + bias; // Biased exponent in the target.
  const uint64_t sig = mant | (uint64_t(1) << 52);
  int shift = 52 - mantBits;
  if (targetExp <= 0) {
    // Subnormal in the target: count units of the smallest subnormal.
    shift += 1 - targetExp;
    targetExp = 0;
  }
  if (shift >= 64)
    return uint16_t(sign);

  uint64_t rounded = sig >> shift;
  const uint64_t rem = sig & ((uint64_t(1) << shift) - 1);
  const uint64_t half = uint64_t(1) << (shift - 1);
  if (rem > half || (rem == half && (rounded & 1)))
    ++rounded;

  uint64_t result;
  if (targetExp == 0) {
    // rounded <= 2^mantBits; exactly 2^mantBits encodes the smallest normal.
    result = rounded;
  } else {
    // rounded is in [2^mantBits, 2^(mantBits+1)]; a carry out of the
    // mantissa bumps the exponent, as it should.
    result = (uint64_t(targetExp) << mantBits) +
             (rounded - (uint64_t(1) << mantBits));
  }
  if (result >= expMask)
    return uint16_t(sign | expMask); // Overflow to +-inf.
  return uint16_t(sign | result);
}

float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

} // namespace

uint16_t attn::doubleToHalf(double value) {
  return roundToSmallFloat(value, 5, 10);
}

uint16_t attn::floatToHalf(float value) {
  // float -> double is exact, so this rounds once.
  return doubleToHalf(double(value));
}

float attn::halfToFloat(uint16_t bits) {
  const uint32_t sign = uint32_t(bits & 0x8000) << 16;
  const uint32_t exp = (bits >> 10) & 0x1f;
  const uint32_t mant = bits & 0x3ff;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float.
    float magnitude = float(mant) * (1.0f / 16777216.0f);
    return sign ? -magnitude : magnitude;
  }
  if (exp == 0x1f)
    return bitsToFloat(sign | 0x7f800000u | (mant << 13));
  return bitsToFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

uint16_t attn::doubleToBF16(double value) {
  return roundToSmallFloat(value, 8, 7);
}

uint16_t attn::floatToBF16(float value) { return doubleToBF16(double(value)); }

float attn::bf16ToFloat(uint16_t bits) {
  return bitsToFloat(uint32_t(bits) << 16);
}

//===----------------------------------------------------------------------===//
// DType
//===----------------------------------------------------------------------===//

double attn::roundToDType(DType dtype, double value) {
  switch (dtype) {
  case DType::F16:
    return halfToFloat(doubleToHalf(value));
  case DType::BF16:
    return bf16ToFloat(doubleToBF16(value));
  case DType::F32:
    return double(float(value));
  }
  return value;
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

int64_t HostTensor::numElements() const {
  int64_t count = 1;
  for (int64_t size : sizes)
    count *= size;
  return count;
}

int64_t HostTensor::offset(const int64_t *idx) const {
  int64_t result = 0;
  for (size_t i = 0; i < sizes.size(); ++i)
    result += idx[i] * strides[i];
  return result;
}

double HostTensor::getAtOffset(int64_t offset) const {
  const uint8_t *p = storage.data() + size_t(offset) * dtypeBytes(dtype);
  switch (dtype) {
  case DType::F16:
  case DType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, p, sizeof(bits));
    return dtype == DType::F16 ? halfToFloat(bits) : bf16ToFloat(bits);
  }
  case DType::F32: {
    float value;
    std::memcpy(&value, p, sizeof(value));
    return value;
  }
  }
  return 0.0;
}

void HostTensor::setAtOffset(int64_t offset, double value) {
  uint8_t *p = storage.data() + size_t(offset) * dtypeBytes(dtype);
  switch (dtype) {
  case DType::F16:
  case DType::BF16: {
    uint16_t bits =
        dtype == DType::F16 ? doubleToHalf(value) : doubleToBF16(value);
    std::memcpy(p, &bits, sizeof(bits));
    return;
  }
  case DType::F32: {
    float narrowed = float(value);
    std::memcpy(p, &narrowed, sizeof(narrowed));
    return;
  }
  }
}

double HostTensor::get(const int64_t *idx) const {
  return getAtOffset(offset(idx));
}

void HostTensor::set(const int64_t *idx, double value) {
  setAtOffset(offset(idx), value);
}

namespace {

/// Storage offset of row-major logical position `linear`.
int64_t linearToOffset(const HostTensor &t, int64_t linear) {
  int64_t result = 0;
  for (int64_t i = t.rank() - 1; i >= 0; --i) {
    const int64_t size = t.sizes[size_t(i)];
    result += (linear % size) * t.strides[size_t(i)];
    linear /= size;
  }
  return result;
}

/// Calls `fn(offset)` for every element in row-major logical order.
template <typename Fn> void forEachOffset(const HostTensor &t, Fn fn) {
  const int64_t count = t.numElements();
  if (count == 0)
    return;
  const size_t rank = t.sizes.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t offset = 0;
  for (int64_t n = 0; n < count; ++n) {
    fn(offset);
    // Odometer step over the logical index, keeping `offset` in sync.
    for (size_t d = rank; d-- > 0;) {
      if (++idx[d] < t.sizes[d]) {
        offset += t.strides[d];
        break;
      }
      offset -= (t.sizes[d] - 1) * t.strides[d];
      idx[d] = 0;
    }
  }
}

/// A tensor with the given sizes and strides and zeroed storage covering
/// exactly the addressed elements (strides must be non-negative).
HostTensor makeStrided(DType dtype, std::vector<int64_t> sizes,
                       std::vector<int64_t> strides) {
  HostTensor t;
  t.dtype = dtype;
  t.sizes = std::move(sizes);
  t.strides = std::move(strides);
  int64_t span = 0;
  if (t.numElements() > 0) {
    span = 1;
    for (size_t i = 0; i < t.sizes.size(); ++i)
      span += (t.sizes[i] - 1) * t.strides[i];
  }
  t.storage.assign(size_t(span) * dtypeBytes(dtype), 0);
  return t;
}

} // namespace

double HostTensor::getLinear(int64_t linear) const {
  return getAtOffset(linearToOffset(*this, linear));
}

void HostTensor::setLinear(int64_t linear, double value) {
  setAtOffset(linearToOffset(*this, linear), value);
}

std::vector<double> HostTensor::toLogicalVector() const {
  std::vector<double> values;
  values.reserve(size_t(numElements()));
  forEachOffset(*this,
                [&](int64_t offset) { values.push_back(getAtOffset(offset)); });
  return values;
}

HostTensor attn::makeAttnTensor(DType dtype, int64_t B, int64_t H, int64_t S,
                                int64_t D, const std::string &layout) {
  if (B < 0 || H < 0 || S < 0 || D < 0)
    throw std::invalid_argument("makeAttnTensor: negative size");
  if (layout == "bhsd")
    return makeStrided(dtype, {B, H, S, D}, {H * S * D, S * D, D, 1});
  if (layout == "bshd")
    return makeStrided(dtype, {B, H, S, D}, {S * H * D, D, H * D, 1});
  throw std::invalid_argument("makeAttnTensor: unknown layout '" + layout +
                              "' (expected bhsd or bshd)");
}

HostTensor attn::makeF32Vector(int64_t n) {
  if (n < 0)
    throw std::invalid_argument("makeF32Vector: negative size");
  return makeStrided(DType::F32, {n}, {1});
}

HostTensor attn::makeLseTensor(int64_t B, int64_t H, int64_t S) {
  if (B < 0 || H < 0 || S < 0)
    throw std::invalid_argument("makeLseTensor: negative size");
  return makeStrided(DType::F32, {B, H, S}, {H * S, S, 1});
}

void attn::fillStandardNormal(HostTensor &t, std::mt19937_64 &rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  forEachOffset(t, [&](int64_t offset) { t.setAtOffset(offset, normal(rng)); });
}

void attn::fillNaN(HostTensor &t) {
  // Every storage slot, not only the addressed ones.
  const int64_t slots = int64_t(t.storage.size() / dtypeBytes(t.dtype));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t i = 0; i < slots; ++i)
    t.setAtOffset(i, nan);
}

uint64_t attn::hostMemoryLimit(std::string &what) {
  uint64_t limit = std::numeric_limits<uint64_t>::max();
  what = "no known limit";
  auto lower = [&](uint64_t bytes, const char *name) {
    if (bytes > 0 && bytes < limit) {
      limit = bytes;
      what = name;
    }
  };
  long pages = ::sysconf(_SC_PHYS_PAGES), pageSize = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0)
    lower(uint64_t(pages) * uint64_t(pageSize), "physical memory");
  struct rlimit rl;
  if (::getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    lower(uint64_t(rl.rlim_cur), "the address-space limit (ulimit -v)");
  if (::getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
    lower(uint64_t(rl.rlim_cur), "the data-size limit (ulimit -d)");
  // cgroup v2: "max" or a byte count.
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");
  uint64_t bytes = 0;
  if (cgroup >> bytes)
    lower(bytes, "the cgroup's memory.max");
  return limit;
}
