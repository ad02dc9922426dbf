// The TensorBoard event-file reader the :scalars route runs on files a replica wrote: TFRecord
// framing (lengths, masked CRC32C) and the Event/Summary protobuf decoder, on arbitrary bytes.
// Payloads are decoded whether or not their CRCs matched, so the decoder sees hostile protobuf.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tensorboard/event_decoder.h"
#include "tensorboard/tfrecord.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  std::vector<trainyard::tensorboard::ScalarEvent> events;
  (void)trainyard::tensorboard::DecodeEventScalars(in, &events);
  auto scan = trainyard::tensorboard::ScanTfRecords(in);
  if (scan.consumed > size) __builtin_trap();  // never past the buffer
  for (std::string_view payload : scan.payloads) {
    (void)trainyard::tensorboard::DecodeEventScalars(payload, &events);
  }
  return 0;
}
