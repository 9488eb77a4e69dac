package licensing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import licensing.junit.Sandbox;
import org.junit.jupiter.api.Test;

/**
 * No simulator outlives the JVM that started it: a child JVM starts one (as the extension
 * does) and is killed with SIGKILL, or returns from {@code main} without stopping it.
 */
class LifecycleTest {
  /** The most a simulator may take to notice its standard input's end and stop. */
  private static final long GONE_WITHIN_SECONDS = 30;

  /** The child: starts a sandbox, says its PID and URL, then waits, or returns when told. */
  public static void main(String[] args) throws Exception {
    Sandbox sandbox = Sandbox.start();
    System.out.println(sandbox.pid() + " " + sandbox.url());
    System.out.flush();
    if (args[0].equals("wait")) {
      Thread.sleep(Long.MAX_VALUE);
    }
    // "return": once told to, with the sandbox still running.
    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
  }

  private static Process child(String mode) throws Exception {
    String java = ProcessHandle.current().info().command().orElse(
        Path.of(System.getProperty("java.home"), "bin", "java").toString());
    return new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"), LifecycleTest.class.getName(), mode)
        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
  }

  private static long simulatorOf(Process child) throws Exception {
    String line = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)).readLine();
    assertTrue(line != null && line.matches("\\d+ http://127\\.0\\.0\\.1:\\d+"), "the child said " + line);
    long pid = Long.parseLong(line.split(" ")[0]);
    assertTrue(running(pid), "the child's simulator runs");
    assertEquals(child.pid(), ProcessHandle.of(pid).flatMap(ProcessHandle::parent).map(ProcessHandle::pid).orElse(-1L),
        "the simulator is the child JVM's");
    return pid;
  }

  /** Whether {@code pid} is a live process (a zombie, exited but not reaped, is not). */
  private static boolean running(long pid) {
    Path stat = Path.of("/proc", Long.toString(pid), "stat");
    try {
      String text = Files.readString(stat);
      return !text.substring(text.lastIndexOf(')') + 2).startsWith("Z");
    } catch (java.io.IOException gone) {
      return false;
    }
  }

  private static void assertGone(long pid) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(GONE_WITHIN_SECONDS);
    while (running(pid) && System.nanoTime() < deadline) {
      Thread.sleep(50);
    }
    assertFalse(running(pid), "simulator " + pid + " still runs " + GONE_WITHIN_SECONDS + " s after its JVM ended");
  }

  @Test
  void aJvmKilledWithSigkillTakesItsSimulatorWithIt() throws Exception {
    Process jvm = child("wait");
    try {
      long simulator = simulatorOf(jvm);
      // destroyForcibly is SIGKILL on Linux: no shutdown hook, no clean-up of any kind runs.
      jvm.destroyForcibly();
      assertTrue(jvm.waitFor(GONE_WITHIN_SECONDS, TimeUnit.SECONDS));
      assertEquals(128 + 9, jvm.exitValue(), "killed by SIGKILL");
      assertGone(simulator);
    } finally {
      jvm.destroyForcibly();
    }
  }

  @Test
  void aJvmThatEndsWithoutStoppingItsSandboxStopsItOnTheWayOut() throws Exception {
    Process jvm = child("return");
    try {
      long simulator = simulatorOf(jvm);
      jvm.getOutputStream().write("return\n".getBytes(StandardCharsets.UTF_8));
      jvm.getOutputStream().flush();
      assertTrue(jvm.waitFor(GONE_WITHIN_SECONDS, TimeUnit.SECONDS));
      assertEquals(0, jvm.exitValue());
      assertGone(simulator);
    } finally {
      jvm.destroyForcibly();
    }
  }
}
