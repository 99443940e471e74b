// storage_driver_sources.cpp: the storage drivers' sources, built into the unit tests so that the tests run
// the kernel's own driver code.
#include "../../kernel/drivers/storage/ahci.cpp"
#include "../../kernel/drivers/storage/nvme.cpp"
#include "../../kernel/drivers/storage/storage_pci.cpp"
