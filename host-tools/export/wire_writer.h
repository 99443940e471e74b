// wire_writer.h: protobuf's wire format written by hand into a buffer with room, for the packets an export
// writes by the million. A field is its tag (a varint of number << 3 | wire type: 0 varint, 1 fixed 64 bits,
// 2 length and bytes) and its value. A nested message is written where it goes, after one byte kept for its
// length, which is set when it closes; a length of 128 or more moves the message up to make room for its
// varint. No message is built apart and copied into the one around it.
#pragma once

#include <google/protobuf/io/coded_stream.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ett::host {

class WireWriter {
 public:
  explicit WireWriter(uint8_t* at) : m_at(at) {}
  uint8_t* at() const { return m_at; }
  void varint(uint32_t field, uint64_t value) {
    put(uint64_t{field} << 3);
    put(value);
  }
  void fixed64(uint32_t field, double value) {
    put(uint64_t{field} << 3 | 1);
    m_at = Stream::WriteLittleEndian64ToArray(std::bit_cast<uint64_t>(value), m_at);
  }
  // Opens a message field: its tag and the byte kept for its length, whose place goes to close().
  uint8_t* open(uint32_t field) {
    put(uint64_t{field} << 3 | 2);
    return m_at++;
  }
  // Closes the message opened at `length`: at most 9 bytes more than was written, for its length's varint.
  void close(uint8_t* length) {
    const auto size = static_cast<size_t>(m_at - (length + 1));
    if (size < 0x80) {
      *length = static_cast<uint8_t>(size);
      return;
    }
    uint8_t varint[10];
    const auto bytes = static_cast<size_t>(Stream::WriteVarint64ToArray(size, varint) - varint);
    std::memmove(length + bytes, length + 1, size);
    std::memcpy(length, varint, bytes);
    m_at += bytes - 1;
  }

 private:
  using Stream = google::protobuf::io::CodedOutputStream;
  void put(uint64_t value) { m_at = Stream::WriteVarint64ToArray(value, m_at); }
  uint8_t* m_at;
};

}  // namespace ett::host
