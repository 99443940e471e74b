// perfetto_proto_test.cpp: the protobuf export read back through libprotobuf's classes generated from
// export/perfetto_trace.proto: the hand-encoded packets of events and actions are the bytes libprotobuf
// writes for the same messages, and carry each event's and action's fields.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "export/perfetto.h"
#include "export/perfetto_trace.pb.h"

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

// `ett export` hands the Perfetto writers its actions as links into the events it holds: both formats must
// write from them what they write from the actions pair_actions gives.
TEST(ExportPerfettoProto, LinkedActionsWriteWhatPairedActionsWrite) {
  std::mt19937_64 random(5);
  const Capture capture = odd_capture(random);
  for (PairRule rule : {PairRule::SameCode, PairRule::Fifo}) {
    auto paired = pair_actions(capture.events, {1, {}}, {2, {}}, 0, rule, Summarize::No);
    ASSERT_TRUE(paired) << paired.error().message;
    auto links = pair_links(capture.events, {1, {}}, {2, {}}, rule);
    ASSERT_TRUE(links) << links.error().message;
    ASSERT_GT(links->size(), 50u);
    const ActionList linked(*links, capture.events);
    EXPECT_TRUE(export_perfetto_proto(capture, linked) == export_perfetto_proto(capture, paired->actions));
    EXPECT_EQ(export_perfetto(capture, linked), export_perfetto(capture, paired->actions));
  }
}
