// CRC32C (Castagnoli polynomial, reflected 0x82F63B78), the checksum of Cloud Storage objects
// (`crc32c`) and of TFRecord framing (TensorBoard event files). One implementation for both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace trainyard {

// CRC32C of `data` continuing from `crc` (0 for a fresh checksum), so that a stream can be
// checksummed piece by piece. Uses the SSE4.2 instruction when the CPU has it, a table
// otherwise; both give the same value.
uint32_t Crc32cExtend(uint32_t crc, const void* data, size_t size);

inline uint32_t Crc32c(std::string_view data) { return Crc32cExtend(0, data.data(), data.size()); }

}  // namespace trainyard
