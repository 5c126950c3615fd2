// The core's own Q8/Q4 code (src/tensors/weight.cpp, what the loader runs for dtype 'q8' / 'q4')
// as a command, so that gguf_writer.test.cjs can compare its bytes with the GGUF writer's:
//   our_quantizer q8|q4 IN.f32 OUT.bin     quantize float32 values (a multiple of 32)
//   our_quantizer dq8|dq4 IN.bin N OUT.f32  dequantize N values' blocks
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tensors/quantize.h"
#include "tensors/weight.h"

static std::vector<unsigned char> slurp(const char* file) {
  std::vector<unsigned char> bytes;
  if (FILE* f = std::fopen(file, "rb")) {
    unsigned char chunk[65536];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) bytes.insert(bytes.end(), chunk, chunk + n);
    std::fclose(f);
  }
  return bytes;
}

static bool spit(const char* file, const void* data, std::size_t n) {
  FILE* f = std::fopen(file, "wb");
  if (!f) return false;
  const bool ok = std::fwrite(data, 1, n, f) == n;
  return std::fclose(f) == 0 && ok;
}

int main(int argc, char** argv) {
  const std::string op = argc > 1 ? argv[1] : "";
  if ((op == "q8" || op == "q4") && argc == 4) {
    const std::vector<unsigned char> raw = slurp(argv[2]);
    const int n = static_cast<int>(raw.size() / 4);
    std::vector<float> x(n);
    std::memcpy(x.data(), raw.data(), 4 * std::size_t(n));
    std::vector<unsigned char> out(attn::row_bytes(op == "q8" ? attn::WeightType::kQ8_0 : attn::WeightType::kQ4_0, n));
    const bool ok = op == "q8" ? attn::quantize_q8(x.data(), n, out.data()) : attn::quantize_q4(x.data(), n, out.data());
    return ok && spit(argv[3], out.data(), out.size()) ? 0 : 1;
  }
  if ((op == "dq8" || op == "dq4") && argc == 5) {
    const std::vector<unsigned char> blocks = slurp(argv[2]);
    const int n = std::atoi(argv[3]);
    std::vector<float> x(n);
    if (op == "dq8") attn::dequantize_q8(blocks.data(), n, x.data());
    else attn::dequantize_q4(blocks.data(), n, x.data());
    return spit(argv[4], x.data(), 4 * std::size_t(n)) ? 0 : 1;
  }
  std::fprintf(stderr, "usage: our_quantizer q8|q4 IN.f32 OUT.bin | dq8|dq4 IN.bin N OUT.f32\n");
  return 2;
}
