// Embedding attn-mlir in a C++ program through the installed package
// (find_package(AttnMLIR), target AttnMLIR::attn): describe an attention,
// get a compiled kernel, launch it on your own buffers. Runs one causal GQA
// attention on the CPU and, when a CUDA driver and GPU are present, on the
// GPU; checks both against a naive double-precision loop.
//
//   embed            exit 0 when every run matches

#include <attn/JIT/Attention.h>

#include <cmath>
#include <cstdio>
#include <dlfcn.h>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int64_t B = 2, H = 4, HKV = 2, SQ = 100, SKV = 130, D = 64;

/// Tensors stored [B, S, heads, D] (BSHD), given to the kernel with
/// logical [B, heads, S, D] sizes and the matching strides.
attn::TensorRef bshd(float *data, int64_t heads, int64_t seq) {
  attn::TensorRef t;
  t.data = data;
  int64_t sizes[4] = {B, heads, seq, D};
  int64_t strides[4] = {seq * heads * D, D, heads * D, 1};
  for (int i = 0; i < 4; ++i) {
    t.sizes[i] = sizes[i];
    t.strides[i] = strides[i];
  }
  return t;
}

/// Naive causal (top-left) GQA attention in double; relative L2 error of
/// `out` against it.
double check(const std::vector<float> &q, const std::vector<float> &k,
             const std::vector<float> &v, const std::vector<float> &out) {
  double num = 0, den = 0;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < SQ; ++i) {
        int64_t g = h / (H / HKV);
        auto at = [&](const std::vector<float> &t, int64_t heads,
                      int64_t seq, int64_t hh, int64_t s, int64_t d) {
          return double(t[((b * seq + s) * heads + hh) * D + d]);
        };
        std::vector<double> p(SKV, 0.0);
        double max = -INFINITY, sum = 0;
        for (int64_t j = 0; j <= i && j < SKV; ++j) {
          double s = 0;
          for (int64_t d = 0; d < D; ++d)
            s += at(q, H, SQ, h, i, d) * at(k, HKV, SKV, g, j, d);
          p[j] = s / std::sqrt(double(D));
          max = std::max(max, p[j]);
        }
        for (int64_t j = 0; j <= i && j < SKV; ++j)
          sum += p[j] = std::exp(p[j] - max);
        for (int64_t d = 0; d < D; ++d) {
          double ref = 0;
          for (int64_t j = 0; j <= i && j < SKV; ++j)
            ref += p[j] * at(v, HKV, SKV, g, j, d);
          ref /= sum;
          double diff = at(out, H, SQ, h, i, d) - ref;
          num += diff * diff;
          den += ref * ref;
        }
      }
  return std::sqrt(num / den);
}

/// The few CUDA driver calls this example needs to own device buffers
/// (an application would use its own CUDA setup here).
struct Cuda {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW);
  template <typename F> F fn(const char *name) {
    return reinterpret_cast<F>(dlsym(lib, name));
  }
  unsigned long long upload(const std::vector<float> &host) {
    unsigned long long ptr = 0;
    fn<int (*)(unsigned long long *, size_t)>("cuMemAlloc_v2")(
        &ptr, host.size() * 4);
    fn<int (*)(unsigned long long, const void *, size_t)>("cuMemcpyHtoD_v2")(
        ptr, host.data(), host.size() * 4);
    return ptr;
  }
  bool download(std::vector<float> &host, unsigned long long ptr) {
    return fn<int (*)()>("cuCtxSynchronize")() == 0 &&
           fn<int (*)(void *, unsigned long long, size_t)>("cuMemcpyDtoH_v2")(
               host.data(), ptr, host.size() * 4) == 0;
  }
};

} // namespace

int main() {
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  std::vector<float> q(B * SQ * H * D), k(B * SKV * HKV * D),
      v(B * SKV * HKV * D), out(B * SQ * H * D, NAN);
  for (auto *t : {&q, &k, &v})
    for (float &x : *t)
      x = normal(rng);

  attn::AttentionSpec spec;
  spec.dtype = attn::DType::F32;
  spec.headDim = D;
  spec.causal = attn::CausalKind::TopLeft;
  spec.gqaRatio = H / HKV;

  int failures = 0;
  std::string error;
  // The CPU.
  {
    attn::KernelOrigin origin;
    auto kernel =
        attn::getKernel(spec, *attn::Target::parse("cpu", error), error,
                        &origin);
    attn::LaunchArgs args;
    args.q = bshd(q.data(), H, SQ);
    args.k = bshd(k.data(), HKV, SKV);
    args.v = bshd(v.data(), HKV, SKV);
    args.o = bshd(out.data(), H, SQ);
    if (!kernel || !kernel->launch(args, error)) {
      std::fprintf(stderr, "embed: cpu: %s\n", error.c_str());
      return 1;
    }
    double err = check(q, k, v, out);
    bool ok = err <= 1e-5;
    failures += !ok;
    std::printf("embed: cpu (%s) rel_l2_err=%.3e %s\n",
                attn::kernelOriginName(origin), err, ok ? "PASS" : "FAIL");
  }
  // The GPU, when there is one.
  std::optional<attn::Target> gpu = attn::Target::parse("cuda", error);
  if (!gpu) {
    std::printf("embed: no GPU run (%s)\n", error.c_str());
    return failures ? 1 : 0;
  }
  auto kernel = attn::getKernel(spec, *gpu, error);
  if (!kernel) {
    std::fprintf(stderr, "embed: %s: %s\n", gpu->str().c_str(),
                 error.c_str());
    return 1;
  }
  Cuda cuda;
  std::vector<float> gpuOut(out.size(), NAN);
  unsigned long long dq = cuda.upload(q), dk = cuda.upload(k),
                     dv = cuda.upload(v), dout = cuda.upload(gpuOut);
  attn::LaunchArgs args;
  args.q = bshd(reinterpret_cast<float *>(dq), H, SQ);
  args.k = bshd(reinterpret_cast<float *>(dk), HKV, SKV);
  args.v = bshd(reinterpret_cast<float *>(dv), HKV, SKV);
  args.o = bshd(reinterpret_cast<float *>(dout), H, SQ);
  if (!kernel->launch(args, error) || !cuda.download(gpuOut, dout)) {
    std::fprintf(stderr, "embed: %s: %s\n", gpu->str().c_str(),
                 error.c_str());
    return 1;
  }
  double err = check(q, k, v, gpuOut);
  bool ok = err <= 1e-3; // tf32 tensor cores
  failures += !ok;
  std::printf("embed: %s rel_l2_err=%.3e %s\n", gpu->str().c_str(), err,
              ok ? "PASS" : "FAIL");
  return failures ? 1 : 0;
}
