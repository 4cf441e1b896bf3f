/* nanolet's pause program: PID 1 of every pod sandbox. Holds the pod's namespaces, reaps
 * orphaned children, and exits on SIGINT or SIGTERM. Built static so that the image needs
 * nothing else. */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_terminate(int signo) {
  (void)signo;
  _exit(0);
}

static void on_child(int signo) {
  (void)signo;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(void) {
  struct sigaction terminate = {.sa_handler = on_terminate};
  struct sigaction child = {.sa_handler = on_child, .sa_flags = SA_NOCLDSTOP};
  sigaction(SIGINT, &terminate, NULL);
  sigaction(SIGTERM, &terminate, NULL);
  sigaction(SIGCHLD, &child, NULL);
  for (;;) pause();
  return 1;
}
