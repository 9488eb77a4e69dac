package licensing.junit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the simulator's binary is looked for: its variable, the packages' folder, then PATH. */
class BinaryTest {
  @Test
  void theBinaryIsTheVariablesThenOnePathHolds(@TempDir Path dir) throws Exception {
    Path bin = Files.createFile(dir.resolve("licensing-sim"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
    Path other = Files.createDirectories(dir.resolve("elsewhere"));
    assertEquals(bin, Sandbox.binary(Map.of("PATH", other + ":" + dir)));
    Path packaged = Files.createDirectories(dir.resolve("wheel-bin"));
    Path inPackage = Files.copy(bin, packaged.resolve("licensing-sim"));
    assertEquals(inPackage, Sandbox.binary(Map.of("LICENSING_SANDBOX_BIN_DIR", packaged.toString(), "PATH", dir.toString())));
    Path named = Files.copy(bin, dir.resolve("named-sim"));
    assertEquals(named, Sandbox.binary(Map.of("LICENSING_SIM_BIN", named.toString(), "PATH", dir.toString())));

    IllegalStateException missing = assertThrows(IllegalStateException.class,
        () -> Sandbox.binary(Map.of("LICENSING_SIM_BIN", dir.resolve("none").toString(), "PATH", dir.toString())));
    assertEquals("LICENSING_SIM_BIN=" + dir.resolve("none") + " is not an executable file", missing.getMessage());
    IllegalStateException nowhere = assertThrows(IllegalStateException.class,
        () -> Sandbox.binary(Map.of("PATH", other.toString())));
    assertTrue(nowhere.getMessage().startsWith("licensing-sim not found: set LICENSING_SIM_BIN to the binary, or put"
        + " licensing-sim on PATH"), nowhere.getMessage());
  }

  private static Path script(Path dir, String body) throws Exception {
    return Files.writeString(Files.createFile(dir.resolve("sim.sh"),
        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"))), "#!/bin/sh\n" + body + "\n");
  }

  @Test
  void aBinaryThatDoesNotStartIsReportedWithWhatItSaid(@TempDir Path dir) throws Exception {
    Path failing = script(dir, "echo 'error: unexpected argument' >&2; exit 2");
    IllegalStateException error = assertThrows(IllegalStateException.class,
        () -> Sandbox.start(Map.of("LICENSING_SIM_BIN", failing.toString())));
    assertEquals("licensing-sim did not say where it listens: error: unexpected argument", error.getMessage());
  }

  @Test
  void whatABinarySaysIsReadToABound(@TempDir Path dir) throws Exception {
    // Its stderr first: once its stdout is read, its stderr is all written.
    Path chatty = script(dir, "head -c 100000 /dev/zero | tr '\\0' y >&2; head -c 100000 /dev/zero | tr '\\0' x; echo");
    IllegalStateException error = assertThrows(IllegalStateException.class,
        () -> Sandbox.start(Map.of("LICENSING_SIM_BIN", chatty.toString())));
    String said = "x".repeat(Sandbox.MAX_LINE);
    assertEquals("licensing-sim did not say where it listens (it said " + said + "): " + "y".repeat(Sandbox.MAX_LINE),
        error.getMessage());
  }
}
