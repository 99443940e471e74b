/* probe_user.c: a small C program against the installed libettprobe (tests/install/install_test.sh,
   deb_test.sh). No probe file here: the open fails, and the library says why. */
#include <ettprobe.h>
#include <stdio.h>
int main(void) {
  ett_probe* probe = ett_probe_open("shm:/nonexistent/probe");
  if (probe) return 1;
  printf("%s\n", ett_probe_last_error());
  return 0;
}
