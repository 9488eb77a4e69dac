package licensing.junit;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import licensing.Licensing;
import licensing.sandbox.ApiClient;
import licensing.sandbox.ApiException;
import licensing.sandbox.api.TenantsApi;
import licensing.sandbox.model.BuiltinSeed;
import licensing.sandbox.model.TenantSpec;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A {@code licensing-sim} process of this JVM's, on a free loopback port, with an admin token
 * of its own. It stops when {@link #close} is called, when the JVM exits, and, because it
 * runs with {@code --exit-on-stdin-close} on a pipe only this JVM holds, when the JVM dies
 * any other way (SIGKILL included).
 *
 * <p>The binary: {@value #BIN_VARIABLE} when set, else {@code licensing-sim} in
 * {@value #BIN_DIR_VARIABLE}, else on {@code PATH}.
 */
public final class Sandbox implements AutoCloseable, ExtensionContext.Store.CloseableResource {
  /** The variable naming the simulator's binary, looked at first. */
  public static final String BIN_VARIABLE = "LICENSING_SIM_BIN";
  /** The folder of the sandbox packages' programs (the wheel's, the npm package's), looked in next. */
  public static final String BIN_DIR_VARIABLE = "LICENSING_SANDBOX_BIN_DIR";
  /** Seconds {@link #start} waits for the simulator to say where it listens. */
  public static final long START_TIMEOUT_SECONDS = 30;
  /** Seconds {@link #close} waits for each of: a clean stop, SIGTERM; then SIGKILL. */
  public static final long STOP_TIMEOUT_SECONDS = 10;
  /** The most read of its first line, and of its stderr when it does not start. */
  static final int MAX_LINE = 4096;
  /** Seconds a tenant no request reaches outlives a run that could not delete it. */
  public static final long TENANT_TTL_SECONDS = 900;

  private final Process process;
  private final String url;
  private final String adminToken;
  private final Thread hook;

  private Sandbox(Process process, String url, String adminToken) {
    this.process = process;
    this.url = url;
    this.adminToken = adminToken;
    this.hook = new Thread(this::stop, "licensing-sim stop");
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** The binary: {@value #BIN_VARIABLE} of {@code env}, else {@code licensing-sim} in {@value #BIN_DIR_VARIABLE}, else on {@code PATH}. */
  static Path binary(Map<String, String> env) {
    String named = env.get(BIN_VARIABLE);
    if (named != null && !named.isEmpty()) {
      Path path = Path.of(named);
      if (!Files.isRegularFile(path) || !Files.isExecutable(path)) {
        throw new IllegalStateException(BIN_VARIABLE + "=" + named + " is not an executable file");
      }
      return path;
    }
    List<String> dirs = new ArrayList<>();
    if (env.get(BIN_DIR_VARIABLE) != null) {
      dirs.add(env.get(BIN_DIR_VARIABLE));
    }
    dirs.addAll(List.of(env.getOrDefault("PATH", "").split(java.io.File.pathSeparator)));
    for (String dir : dirs) {
      Path path = Path.of(dir.isEmpty() ? "." : dir, "licensing-sim");
      if (Files.isRegularFile(path) && Files.isExecutable(path)) {
        return path;
      }
    }
    throw new IllegalStateException("licensing-sim not found: set " + BIN_VARIABLE
        + " to the binary, or put licensing-sim on PATH (cargo build -p licensing-sim --features bin;"
        + " the licensing-sandbox wheel and npm package carry it too)");
  }

  /** Starts the simulator with the binary's flags {@code args} ({@code "--seed", "demo"}). */
  public static Sandbox start(String... args) {
    return start(System.getenv(), args);
  }

  /** As {@link #start(String...)}, the binary looked for in {@code env}. */
  static Sandbox start(Map<String, String> env, String... args) {
    String adminToken = "sim-admin-" + Licensing.nonce();
    List<String> command = new ArrayList<>(List.of(binary(env).toString(), "--addr", "127.0.0.1:0"));
    command.addAll(List.of(args));
    command.add("--exit-on-stdin-close");
    ProcessBuilder builder = new ProcessBuilder(command);
    // Settings inherited from the environment would make it differ from what this object says.
    builder.environment().keySet().removeIf(name -> name.startsWith("LICENSING_SIM_"));
    // The token goes through the environment, not the command line other users can read.
    builder.environment().put("LICENSING_SIM_ADMIN_TOKEN", adminToken);
    Path log;
    Process process;
    try {
      log = Files.createTempFile("licensing-sim", ".log");
      process = builder.redirectErrorStream(false).redirectError(log.toFile()).start();
    } catch (IOException e) {
      throw new IllegalStateException("cannot start " + command.get(0) + ": " + e.getMessage(), e);
    }
    BufferedReader stdout = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
      // Its first line, of at most MAX_LINE characters.
      StringBuilder first = new StringBuilder();
      try {
        for (int c = stdout.read(); c != -1 && c != '\n' && first.length() < MAX_LINE; c = stdout.read()) {
          first.append((char) c);
        }
      } catch (IOException e) {
        return null;
      }
      return first.length() == 0 ? null : first.toString();
    });
    String said;
    try {
      said = line.get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
    } catch (TimeoutException | java.util.concurrent.ExecutionException e) {
      said = null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      said = null;
    }
    if (said == null || !said.startsWith("listening on http://")) {
      process.destroyForcibly();
      String why = tail(log);
      delete(log);
      throw new IllegalStateException("licensing-sim did not say where it listens"
          + (said == null ? "" : " (it said " + said + ")") + (why.isEmpty() ? "" : ": " + why));
    }
    // It goes on writing to the file, unlinked: nothing is left behind, a killed JVM included.
    delete(log);
    return new Sandbox(process, said.substring("listening on ".length()).trim(), adminToken);
  }

  /** The last {@value #MAX_LINE} bytes of what it wrote on stderr (why it did not start). */
  private static String tail(Path log) {
    try (RandomAccessFile file = new RandomAccessFile(log.toFile(), "r")) {
      byte[] end = new byte[(int) Math.min(MAX_LINE, file.length())];
      file.seek(file.length() - end.length);
      file.readFully(end);
      return new String(end, StandardCharsets.UTF_8).strip();
    } catch (IOException e) {
      return "";
    }
  }

  /** The base URL of both services and of the default tenant's admin API. */
  public String url() {
    return url;
  }

  /** The simulator's own admin token (tenants are created with it). */
  public String adminToken() {
    return adminToken;
  }

  /** The simulator's process id. */
  public long pid() {
    return process.pid();
  }

  /** Whether the process is still there. */
  public boolean running() {
    return process.isAlive();
  }

  /** A client of the default tenant's admin API, for the generated {@code licensing.sandbox.api} classes. */
  public ApiClient admin() {
    return Licensing.sandboxClient(url, adminToken);
  }

  /** A new tenant: its own state, ids, clock, faults, journal and tokens; {@code seed} a built-in seed or null. */
  public Tenant tenant(String name, String seed) {
    TenantSpec spec = new TenantSpec().ttl(TENANT_TTL_SECONDS);
    if (name != null) {
      spec.name(name.length() > 100 ? name.substring(0, 100) : name);
    }
    if (seed != null && !seed.isEmpty()) {
      BuiltinSeed builtin = BuiltinSeed.fromValue(seed);
      if (builtin == BuiltinSeed.UNKNOWN_DEFAULT_OPEN_API) {
        throw new IllegalArgumentException("seed: \"" + seed + "\" is not a built-in seed ("
            + Arrays.stream(BuiltinSeed.values()).filter(b -> b != builtin).map(BuiltinSeed::getValue)
                .collect(Collectors.joining(", ")) + ")");
      }
      spec.seed(builtin);
    }
    try {
      return new Tenant(this, new TenantsApi(admin()).createTenant(spec));
    } catch (ApiException e) {
      throw new IllegalStateException("cannot create a tenant: HTTP " + e.getCode() + " " + e.getResponseBody(), e);
    }
  }

  /** Stops the simulator and waits for it to be gone; safe to call twice. */
  @Override
  public void close() {
    stop();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException exiting) {
      // The JVM is exiting: the hook runs, or ran, stop().
    }
  }

  private void stop() {
    if (process.isAlive()) {
      // Its standard input's end is a clean stop (requests in flight finished).
      try (OutputStream stdin = process.getOutputStream()) {
        stdin.flush();
      } catch (IOException ignored) {
        // Already closed.
      }
      if (!waitFor(STOP_TIMEOUT_SECONDS)) {
        process.destroy();
        if (!waitFor(STOP_TIMEOUT_SECONDS)) {
          process.destroyForcibly();
          waitFor(STOP_TIMEOUT_SECONDS);
        }
      }
    }
  }

  private static void delete(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException ignored) {
      // A temporary file: the system's clean-up takes it.
    }
  }

  private boolean waitFor(long seconds) {
    try {
      return process.waitFor(seconds, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
      return false;
    }
  }

  @Override
  public String toString() {
    // The admin token stays out of logs and reports.
    return "Sandbox[url=" + url + ", pid=" + process.pid() + "]";
  }
}
