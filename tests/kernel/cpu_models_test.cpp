// cpu_models_test.cpp: the MSR_SMI_COUNT model list and the display model (kernel/lib/cpu_models).
#include "lib/cpu_models.h"

#include <gtest/gtest.h>

namespace ett::lib {
namespace {

TEST(KernelCpuModels, DisplayModelAddsTheExtendedModelForFamilies6And15) {
  EXPECT_EQ(display_model(0x000106A5), 0x1Au);  // Core i7 920 (Nehalem)
  EXPECT_EQ(display_model(0x000106C2), 0x1Cu);  // Atom N270 (Bonnell)
  EXPECT_EQ(display_model(0x000906EA), 0x9Eu);  // Core i7-8700 (Coffee Lake)
  EXPECT_EQ(display_model(0x00000543), 0x4u);   // Pentium MMX: family 5 has no extended model
  EXPECT_EQ(display_model(0x00100F42), 0x4u);   // AMD family 0x10: the extended model is not added
}

TEST(KernelCpuModels, BonnellAndSaltwellAtomsHaveNoSmiCount) {
  // All of these are >= 0x1A, Nehalem's model: a "model >= 0x1A" test read the MSR there and took a #GP.
  for (const uint32_t model : {0x1Cu, 0x26u, 0x27u, 0x35u, 0x36u})
    EXPECT_FALSE(has_smi_count_msr(true, 6, model)) << std::hex << model;
}

TEST(KernelCpuModels, NehalemAndLaterCoresHaveIt) {
  for (const uint32_t model :
       {0x1Au, 0x1Eu, 0x2Au, 0x3Cu, 0x4Eu, 0x55u, 0x8Eu, 0x9Eu, 0x97u, 0xBAu, 0x37u, 0x5Cu})
    EXPECT_TRUE(has_smi_count_msr(true, 6, model)) << std::hex << model;
}

TEST(KernelCpuModels, OtherVendorsFamiliesAndUnlistedModelsDoNot) {
  EXPECT_FALSE(has_smi_count_msr(false, 6, 0x1A));  // not GenuineIntel
  EXPECT_FALSE(has_smi_count_msr(true, 15, 0x1A));  // Pentium 4
  EXPECT_FALSE(has_smi_count_msr(true, 6, 0x17));   // Penryn: before Nehalem
  EXPECT_FALSE(has_smi_count_msr(true, 6, 0x06));   // QEMU's default qemu32/qemu64 model
  EXPECT_FALSE(has_smi_count_msr(true, 6, 0xFF));   // a model not (yet) listed
}

}  // namespace
}  // namespace ett::lib
