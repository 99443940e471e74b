// perfetto_proto_test.cpp: the protobuf export read back through libprotobuf's classes generated from
// export/perfetto_trace.proto: the hand-encoded packets of events and actions are the bytes libprotobuf
// writes for the same messages, and carry each event's and action's fields.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "export/perfetto.h"
#include "export/perfetto_trace.pb.h"
#include "export/wire_writer.h"
#include "support/streamed_events.h"

using namespace ett::host;
namespace pb = perfetto::protos;

namespace {

// Events with every field at its extremes somewhere (seq and tsc near 2^64, lines and codes to 255, all eight
// probes) and actions that overlap, end before they start and last NaN.
Capture odd_capture(std::mt19937_64& random) {
  Capture capture;
  capture.info.name = "trace 7";
  capture.info.tsc_hz = 1'000'000'000;
  capture.info.probe_count = 8;
  double time = -50000;  // pretrigger events first
  for (uint64_t k = 0; k < 3000; ++k) {
    AnalysisEvent event;
    event.seq = k < 10 ? std::numeric_limits<uint64_t>::max() - 10 + k : k * (random() % 1000 + 1);
    event.probe = static_cast<uint8_t>(1 + random() % 8);
    event.code = static_cast<uint8_t>(random() % 256);
    event.lines = static_cast<uint8_t>(random() % 256);
    event.tsc = random() >> (random() % 64);
    time += static_cast<double>(random() % 100000) / 7;
    event.time_ns = time;
    capture.events.push_back(event);
  }
  return capture;
}

std::vector<Action> odd_actions(const Capture& capture, std::mt19937_64& random) {
  std::vector<Action> actions;
  for (size_t k = 0; k + 1 < capture.events.size(); k += 3) {
    const AnalysisEvent& start = capture.events[k];
    const AnalysisEvent& end = capture.events[std::min(capture.events.size() - 1, k + random() % 40)];
    Action action;
    action.start_seq = start.seq;
    action.end_seq = end.seq;
    action.start_code = start.code;
    action.end_code = end.code;
    action.start_ns = start.time_ns;
    action.end_ns = end.time_ns;
    action.duration_ns = k % 300 == 0 ? std::nan("") : end.time_ns - start.time_ns;
    actions.push_back(action);
  }
  return actions;
}

uint64_t annotation_uint(const pb::TrackEvent& event, uint64_t name_iid) {
  for (const pb::DebugAnnotation& annotation : event.debug_annotations())
    if (annotation.name_iid() == name_iid) return annotation.uint_value();
  ADD_FAILURE() << "no annotation " << name_iid;
  return 0;
}

}  // namespace

TEST(ExportPerfettoProto, PacketsAreLibprotobufsBytesAndCarryEveryField) {
  std::mt19937_64 random(3);
  const Capture capture = odd_capture(random);
  const std::vector<Action> actions = odd_actions(capture, random);
  const std::string bytes = export_perfetto_proto(capture, actions);

  pb::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(bytes));
  // Reserialized by libprotobuf: the same bytes, so the hand-written packets are its encoding of the fields.
  EXPECT_TRUE(trace.SerializeAsString() == bytes) << "the export is not libprotobuf's encoding";

  const double origin = std::min(0.0, capture.events.front().time_ns);  // no timestamp below 0
  size_t event_index = 0, action_index = 0, slice_ends = 0;
  for (const pb::TracePacket& packet : trace.packet()) {
    if (!packet.has_track_event()) continue;
    EXPECT_EQ(packet.trusted_packet_sequence_id(), 1u);
    EXPECT_EQ(packet.sequence_flags(), pb::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
    const pb::TrackEvent& track_event = packet.track_event();
    switch (track_event.type()) {
      case pb::TrackEvent::TYPE_INSTANT: {
        ASSERT_LT(event_index, capture.events.size());
        const AnalysisEvent& event = capture.events[event_index++];
        EXPECT_EQ(packet.timestamp(), static_cast<uint64_t>(std::llround(event.time_ns - origin)));
        EXPECT_EQ(track_event.track_uuid(), 0x100u + event.probe);
        EXPECT_EQ(track_event.name_iid(), 1u + event.code);
        EXPECT_EQ(annotation_uint(track_event, 1), event.seq);
        EXPECT_EQ(annotation_uint(track_event, 2), event.lines);
        EXPECT_EQ(annotation_uint(track_event, 3), event.tsc);
        ASSERT_EQ(track_event.extra_counter_track_uuids_size(), 1);
        EXPECT_EQ(track_event.extra_counter_track_uuids(0), 0x200u + event.probe);
        ASSERT_EQ(track_event.extra_counter_values_size(), 1);
        EXPECT_EQ(track_event.extra_counter_values(0), event.code);
        break;
      }
      case pb::TrackEvent::TYPE_SLICE_BEGIN: {
        ASSERT_LT(action_index, actions.size());
        const Action& action = actions[action_index++];
        EXPECT_EQ(packet.timestamp(), static_cast<uint64_t>(std::llround(action.start_ns - origin)));
        EXPECT_EQ(track_event.name_iid(), 0x101u + action.start_code);
        EXPECT_GE(track_event.track_uuid(), 0x10000u);
        EXPECT_EQ(annotation_uint(track_event, 4), action.start_seq);
        EXPECT_EQ(annotation_uint(track_event, 5), action.end_seq);
        ASSERT_EQ(track_event.debug_annotations_size(), 3);
        const double duration = track_event.debug_annotations(2).double_value();
        EXPECT_TRUE(duration == action.duration_ns ||
                    (std::isnan(duration) && std::isnan(action.duration_ns)));
        break;
      }
      case pb::TrackEvent::TYPE_SLICE_END:
        ++slice_ends;
        EXPECT_GE(track_event.track_uuid(), 0x10000u);
        break;
      default:
        ADD_FAILURE() << "unexpected track event type " << track_event.type();
    }
  }
  EXPECT_EQ(event_index, capture.events.size());
  EXPECT_EQ(action_index, actions.size());
  EXPECT_EQ(slice_ends, actions.size());
}

// `ett export` hands the Perfetto writers its actions as the ends a streamed pairing keeps: both formats must
// write from them what they write from the actions pair_actions gives.
TEST(ExportPerfettoProto, ActionEndsWriteWhatPairedActionsWrite) {
  std::mt19937_64 random(5);
  const Capture capture = odd_capture(random);
  for (PairRule rule : {PairRule::SameCode, PairRule::Fifo}) {
    auto paired = pair_actions(capture.events, {1, {}}, {2, {}}, 0, rule, Summarize::No);
    ASSERT_TRUE(paired) << paired.error().message;
    auto pairer = ActionPairer::make({1, {}}, {2, {}}, rule, ActionPairer::Keep::Ends);
    ASSERT_TRUE(pairer) << pairer.error().message;
    pairer->add(capture.events);
    auto ends = std::move(*pairer).finish_ends();
    ASSERT_TRUE(ends) << ends.error().message;
    ASSERT_GT(ends->size(), 50u);
    const ActionList ended(*ends);
    EXPECT_TRUE(export_perfetto_proto(capture, ended) == export_perfetto_proto(capture, paired->actions));
    EXPECT_EQ(export_perfetto(capture, ended), export_perfetto(capture, paired->actions));
  }
}

// `ett export` hands the writer the trace a batch at a time as it reads it (PerfettoProtoWriter, blocks
// written behind by a thread), with the earliest time from the database: the bytes are what the whole capture
// in memory writes. The events start before the capture (negative times), so time 0 is the earliest event's.
TEST(ExportPerfettoProto, EventsInBatchesWriteWhatTheWholeCaptureWrites) {
  Capture capture;
  capture.info.name = "trace 2";
  capture.info.tsc_hz = 1'000'000'000;
  capture.events = ett::test::streamed_events(-80'000, 11);
  std::vector<ActionEnds> ends = ett::test::streamed_actions(capture.events);
  // Two that overlap the first one and each other: three action tracks.
  ends.push_back({1, 9000, capture.events[1].time_ns, capture.events[9000].time_ns, 5, 6});
  ends.push_back({2, 3, capture.events[2].time_ns, capture.events[3].time_ns, 7, 8});
  const std::vector<std::string> labels = {"node A"};
  const PerfettoOptions options{labels, nullptr};
  const std::string whole = export_perfetto_proto(capture, ActionList(ends), options);

  TextOut out;
  {
    PerfettoProtoWriter writer(capture.info, 9, capture.events.front().time_ns, out, options);
    ett::test::add_in_batches(writer, capture.events);
    writer.finish(ActionList(ends));
  }
  const std::string batched = out.take();
  EXPECT_EQ(batched.size(), whole.size());
  EXPECT_TRUE(batched == whole);

  pb::Trace trace;
  ASSERT_TRUE(trace.ParseFromString(batched));
  size_t instants = 0, begins = 0, action_tracks = 0, action_names = 0;
  uint64_t earliest = UINT64_MAX;
  for (const pb::TracePacket& packet : trace.packet()) {
    if (packet.has_interned_data())
      for (const pb::EventName& name : packet.interned_data().event_names())
        action_names += name.name().rfind("action code ", 0) == 0;
    if (packet.has_track_descriptor() && packet.track_descriptor().uuid() >= 0x10000) {
      EXPECT_EQ(instants, capture.events.size()) << "the action tracks come after the events";
      EXPECT_EQ(begins, 0u) << "the action tracks come before the slices";
      ++action_tracks;
    }
    if (!packet.has_track_event()) continue;
    const pb::TrackEvent& event = packet.track_event();
    if (event.type() == pb::TrackEvent::TYPE_INSTANT) {
      earliest = std::min<uint64_t>(earliest, packet.timestamp());
      ++instants;
    }
    if (event.type() == pb::TrackEvent::TYPE_SLICE_BEGIN) {
      EXPECT_EQ(action_names, 256u) << "an action's name is interned before it";
      ++begins;
    }
  }
  EXPECT_EQ(instants, capture.events.size());
  EXPECT_EQ(begins, ends.size());
  EXPECT_EQ(action_tracks, 3u);
  EXPECT_EQ(action_names, 256u);
  EXPECT_EQ(earliest, 0u);  // the first event, 80 µs before the capture start
}

// WireWriter's messages written in place, against the bytes libprotobuf writes for the message it parses
// from them, at lengths on both sides of where a length's varint takes a second byte (128) and a third
// (16384): a Trace packet holding a TrackEvent of n debug annotations, each a name and a value of about k
// bytes (a varint, or every other one a double).
TEST(ExportPerfettoProto, HandWrittenMessagesAreLibprotobufsBytesAtEveryLengthSize) {
  std::vector<int> counts;
  for (int n = 0; n <= 40; ++n) counts.push_back(n);
  for (int n = 1000; n <= 1120; n += 3) counts.push_back(n);
  size_t long_lengths = 0;
  for (const int n : counts) {
    for (int k = 1; k <= 10; ++k) {
      std::vector<uint8_t> bytes(64 + 24 * static_cast<size_t>(n));
      auto value = [k](int i) {
        return k == 10 ? UINT64_MAX - static_cast<uint64_t>(i)
                       : (uint64_t{1} << (7 * (k - 1))) + static_cast<uint64_t>(i % 64);
      };
      WireWriter out(bytes.data());
      uint8_t* const packet = out.open(1);
      out.varint(8, 123456789);
      uint8_t* const event = out.open(11);
      for (int i = 0; i < n; ++i) {
        uint8_t* const annotation = out.open(4);
        out.varint(1, static_cast<uint64_t>(i + 1));
        if (i % 2 == 1)
          out.fixed64(5, static_cast<double>(i) / 3);
        else
          out.varint(3, value(i));
        out.close(annotation);
      }
      out.varint(9, pb::TrackEvent::TYPE_INSTANT);
      out.close(event);
      out.close(packet);
      ASSERT_LE(out.at(), bytes.data() + bytes.size());
      const std::string written(reinterpret_cast<const char*>(bytes.data()),
                                static_cast<size_t>(out.at() - bytes.data()));
      pb::Trace trace;
      ASSERT_TRUE(trace.ParseFromString(written)) << n << " " << k;
      ASSERT_EQ(trace.packet_size(), 1);
      const pb::TrackEvent& parsed = trace.packet(0).track_event();
      EXPECT_EQ(trace.packet(0).timestamp(), 123456789u);
      EXPECT_EQ(parsed.type(), pb::TrackEvent::TYPE_INSTANT);
      ASSERT_EQ(parsed.debug_annotations_size(), n);
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(parsed.debug_annotations(i).name_iid(), static_cast<uint64_t>(i + 1));
        if (i % 2 == 1)
          EXPECT_EQ(parsed.debug_annotations(i).double_value(), static_cast<double>(i) / 3);
        else
          EXPECT_EQ(parsed.debug_annotations(i).uint_value(), value(i));
      }
      EXPECT_EQ(trace.SerializeAsString(), written) << n << " " << k;
      if (parsed.ByteSizeLong() >= 16384) ++long_lengths;
    }
  }
  EXPECT_GT(long_lengths, 0u);  // some took a three-byte length
}
