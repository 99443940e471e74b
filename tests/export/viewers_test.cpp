// viewers_test.cpp: exported files opened by the tools people use: the VCD in sigrok-cli and GTKWave
// (vcd2fst, then fst2vcd back); the HTML report in headless Chromium is html_test. Each test skips only when
// its tool is not installed (scripts/debian-packages.txt lists them all).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "export/vcd.h"

using namespace ett::host;
namespace fs = std::filesystem;

namespace {

bool have_tool(const std::string& name) {
  return std::system(("command -v " + name + " >/dev/null 2>&1").c_str()) == 0;
}

// Runs a shell command; returns its exit status and everything it printed (stdout and stderr).
int run(const std::string& command, std::string& output) {
  output.clear();
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) return -1;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) output.append(buffer.data(), n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "ett-export-XXXXXX").string();
    m_path = mkdtemp(pattern.data()) ? pattern : "";
  }
  ~TempDir() {
    std::error_code ignored;
    if (!m_path.empty()) fs::remove_all(m_path, ignored);
  }
  fs::path path() const { return m_path; }

 private:
  fs::path m_path;
};

void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// The capture of export_formats_test: D0 high over [100, 250) and [251, ...), D5 over [100, 500), end at
// 2000.
Capture small_capture() {
  Capture capture;
  capture.info.name = "trace 1";
  capture.info.tsc_hz = 1'000'000'000;
  capture.info.capture_start_tsc = 1000;
  capture.info.capture_end_tsc = 3000;
  capture.events = {
      {0, 1, 1, 0x01, 1100, 100},   {1, 2, 2, 0x21, 1100, 100}, {2, 1, 0, 0x20, 1250, 250.3},
      {3, 1, 1, 0x21, 1251, 250.4}, {4, 2, 0, 0x01, 1500, 500},
  };
  return capture;
}

// sigrok's CSV output: one row per 1 ns sample, columns D0..D7, probe1, probe2.
std::vector<std::string> sigrok_rows(const std::string& output) {
  std::vector<std::string> rows;
  std::istringstream in(output);
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && (line[0] == '0' || line[0] == '1')) rows.push_back(line);
  return rows;
}

}  // namespace

TEST(ExportTools, SigrokReadsTheVcdWithEveryWireAndItsValues) {
  if (!have_tool("sigrok-cli")) GTEST_SKIP() << "sigrok-cli is not installed (Debian package sigrok-cli)";
  TempDir dir;
  const fs::path vcd = dir.path() / "capture.vcd";
  // sigrok-cli 0.7.2 / libsigrok 0.5.2 (Debian 12) stops at the first vector value: the wires only
  // (--no-bus), with a probe's label as its channel name.
  const std::vector<std::string> labels = {"", "node B"};
  VcdOptions options;
  options.bus = false;
  options.probe_labels = labels;
  write_file(vcd, export_vcd(small_capture(), options));
  std::string output;
  ASSERT_EQ(run("sigrok-cli -I vcd -i " + vcd.string() + " -O csv", output), 0) << output;
  // sigrok-cli exits 0 even when its VCD reader complains, so its messages are checked too.
  EXPECT_EQ(output.find("sr: "), std::string::npos) << output;
  EXPECT_NE(output.find("Channels (10/10): D0, D1, D2, D3, D4, D5, D6, D7, probe1, node_B"),
            std::string::npos)
      << output;
  const auto rows = sigrok_rows(output);
  ASSERT_EQ(rows.size(), 2000u);
  EXPECT_EQ(rows[99], "0,0,0,0,0,0,0,0,0,0");
  EXPECT_EQ(rows[100], "1,0,0,0,0,1,0,0,1,1");
  EXPECT_EQ(rows[250], "0,0,0,0,0,1,0,0,0,1");
  EXPECT_EQ(rows[251], "1,0,0,0,0,1,0,0,1,1");
  EXPECT_EQ(rows[500], "1,0,0,0,0,0,0,0,1,0");
  EXPECT_EQ(rows[1999], "1,0,0,0,0,0,0,0,1,0");
}

TEST(ExportTools, SigrokCheckNoticesAMalformedVcd) {
  if (!have_tool("sigrok-cli")) GTEST_SKIP() << "sigrok-cli is not installed (Debian package sigrok-cli)";
  TempDir dir;
  VcdOptions options;
  options.bus = false;
  std::string vcd = export_vcd(small_capture(), options);
  vcd.replace(vcd.find("#500"), 4, "#50");  // time going backwards
  write_file(dir.path() / "bad.vcd", vcd);
  std::string output;
  run("sigrok-cli -I vcd -i " + (dir.path() / "bad.vcd").string() + " -O csv", output);
  EXPECT_NE(output.find("sr: input/vcd"), std::string::npos) << output;
}

namespace {

// GTKWave's converter round trip: vcd2fst, then fst2vcd; returns the timestamps fst2vcd prints.
std::vector<std::string> gtkwave_round_trip(const TempDir& dir, const std::string& vcd, std::string& output) {
  const fs::path in = dir.path() / "in.vcd", fst = dir.path() / "out.fst";
  write_file(in, vcd);
  std::string convert;
  run("vcd2fst " + in.string() + " " + fst.string(), convert);
  run("fst2vcd " + fst.string(), output);
  std::vector<std::string> stamps;
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line))
    if (!line.empty() && line[0] == '#') stamps.push_back(line);
  return stamps;
}

}  // namespace

TEST(ExportTools, GtkwaveConvertsTheVcdWithoutLosingAChange) {
  if (!have_tool("vcd2fst") || !have_tool("fst2vcd"))
    GTEST_SKIP() << "GTKWave's vcd2fst/fst2vcd are not installed (Debian package gtkwave)";
  TempDir dir;
  std::string output;
  const auto stamps = gtkwave_round_trip(dir, export_vcd(small_capture()), output);
  EXPECT_EQ(stamps, (std::vector<std::string>{"#0", "#100", "#250", "#251", "#500", "#2000"})) << output;
  for (const char* var : {" D0 $end", " D7 $end", " probe1 $end", " probe2 $end"})
    EXPECT_NE(output.find(var), std::string::npos) << var;
  // The check has teeth: a VCD whose time goes backwards loses its later changes in GTKWave.
  std::string bad = export_vcd(small_capture());
  bad.replace(bad.find("#500"), 4, "#50");
  EXPECT_NE(gtkwave_round_trip(dir, bad, output),
            (std::vector<std::string>{"#0", "#100", "#250", "#251", "#50", "#2000"}));
}

// The default VCD, code bits and a Unicode label included, reads whole in sigrok-cli 0.7.2 (libsigrok 0.5.2,
// which stops at the first vector value): every sample, each code bit as a channel named as labelled.
TEST(ExportTools, SigrokReadsTheDefaultVcdWithTheCodeBits) {
  if (!have_tool("sigrok-cli")) GTEST_SKIP() << "sigrok-cli is not installed (Debian package sigrok-cli)";
  TempDir dir;
  const std::vector<std::string> labels = {"Kühlung Ω"};
  VcdOptions options;
  options.probe_labels = labels;
  write_file(dir.path() / "default.vcd", export_vcd(small_capture(), options));
  std::string output;
  ASSERT_EQ(run("sigrok-cli -I vcd -i " + (dir.path() / "default.vcd").string() + " -O csv", output), 0)
      << output;
  EXPECT_EQ(output.find("sr: "), std::string::npos) << output;
  EXPECT_NE(
      output.find("Channels (18/18): D0, D1, D2, D3, D4, D5, D6, D7, Kühlung_Ω, probe2, Kühlung_Ω_code[3], "
                  "Kühlung_Ω_code[2], Kühlung_Ω_code[1], Kühlung_Ω_code[0], probe2_code[3], "
                  "probe2_code[2], probe2_code[1], probe2_code[0]"),
      std::string::npos)
      << output;
  const auto rows = sigrok_rows(output);
  ASSERT_EQ(rows.size(), 2000u) << output;
  // At 100 ns probe 1's code is 1 (D0) and probe 2's 2 (D5); at 500 ns probe 2's is 0 again.
  EXPECT_EQ(rows[100], "1,0,0,0,0,1,0,0,1,1,0,0,0,1,0,0,1,0");
  EXPECT_EQ(rows[250], "0,0,0,0,0,1,0,0,0,1,0,0,0,0,0,0,1,0");
  EXPECT_EQ(rows[500], "1,0,0,0,0,0,0,0,1,0,0,0,0,1,0,0,0,0");
}

// GTKWave reads each probe's code bits (NAME_code[i], which it joins into a vector) with their values,
// beside the wires, and a Unicode label as it was written, at every timescale.
TEST(ExportTools, GtkwaveReadsTheCodeBits) {
  if (!have_tool("vcd2fst") || !have_tool("fst2vcd"))
    GTEST_SKIP() << "GTKWave's vcd2fst/fst2vcd are not installed (Debian package gtkwave)";
  TempDir dir;
  std::string output;
  const std::vector<std::string> labels = {"Kühlung Ω"};
  VcdOptions options;
  options.probe_labels = labels;
  EXPECT_EQ(gtkwave_round_trip(dir, export_vcd(small_capture(), options), output),
            (std::vector<std::string>{"#0", "#100", "#250", "#251", "#500", "#2000"}))
      << output;
  EXPECT_NE(output.find(" Kühlung_Ω $end"), std::string::npos) << output;
  for (const char* bit : {" Kühlung_Ω_code[3] $end", " Kühlung_Ω_code[0] $end", " probe2_code[1] $end"})
    EXPECT_NE(output.find(bit), std::string::npos) << bit << "\n" << output;
  // fst2vcd renames the identifiers: find probe 1's bit 0 and probe 2's bit 1 by name; each is 1 from
  // 100 ns (probe 1's drops at 250 ns and is back at 251 ns, probe 2's drops at 500 ns).
  const auto id_of = [&](const std::string& name) {
    const size_t at = output.find(" " + name + " $end");
    const size_t start = output.rfind(' ', at - 1);
    return output.substr(start + 1, at - start - 1);
  };
  const std::string p1 = id_of("Kühlung_Ω_code[0]"), p2 = id_of("probe2_code[1]");
  const auto block = [&](const char* stamp) {
    const size_t at = output.find(stamp);
    return at == std::string::npos ? std::string() : output.substr(at, output.find('#', at + 1) - at);
  };
  EXPECT_NE(block("#100\n").find("\n1" + p1 + "\n"), std::string::npos) << output;
  EXPECT_NE(block("#100\n").find("\n1" + p2 + "\n"), std::string::npos) << output;
  EXPECT_NE(block("#250\n").find("\n0" + p1 + "\n"), std::string::npos) << output;
  EXPECT_NE(block("#251\n").find("\n1" + p1 + "\n"), std::string::npos) << output;
  EXPECT_NE(block("#500\n").find("\n0" + p2 + "\n"), std::string::npos) << output;
  options.timescale_ps = 10'000;
  EXPECT_EQ(gtkwave_round_trip(dir, export_vcd(small_capture(), options), output),
            (std::vector<std::string>{"#0", "#10", "#50", "#200"}))
      << output;
  EXPECT_NE(output.find("$timescale\n\t10ns\n$end"), std::string::npos) << output.substr(0, 400);
}
