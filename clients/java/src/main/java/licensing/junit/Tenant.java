package licensing.junit;

import licensing.Licensing;
import licensing.sandbox.ApiException;
import licensing.sandbox.api.ClockApi;
import licensing.sandbox.api.FaultsApi;
import licensing.sandbox.api.JournalApi;
import licensing.sandbox.api.StateApi;
import licensing.sandbox.api.TenantsApi;
import licensing.sandbox.model.SeedResult;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A tenant of a {@link Sandbox}: a sandbox of its own inside the simulator (its own state,
 * ids, clock, {@code g_nonce} window, fault rules, journal and tokens) under its URL. The
 * clients and admin APIs below are bound to it; {@link #close} deletes it.
 */
public final class Tenant implements AutoCloseable, ExtensionContext.Store.CloseableResource {
  private final Sandbox sandbox;
  private final licensing.sandbox.model.Tenant tenant;
  private volatile boolean deleted;

  Tenant(Sandbox sandbox, licensing.sandbox.model.Tenant tenant) {
    this.sandbox = sandbox;
    this.tenant = tenant;
  }

  /** Its id, 32 hexadecimal digits. */
  public String id() {
    return tenant.getId();
  }

  /** The base URL of both services and of its admin API. */
  public String url() {
    return tenant.getUrl();
  }

  /** The order service's application token under its URL. */
  public String appToken() {
    return tenant.getTokens().getApp();
  }

  /** The member center's client token under its URL. */
  public String clientToken() {
    return tenant.getTokens().getClient();
  }

  /** The member center's user token under its URL. */
  public String userToken() {
    return tenant.getTokens().getUser();
  }

  /** Its admin API's token. */
  public String adminToken() {
    return tenant.getTokens().getAdmin();
  }

  /** The ids of what its seed created (null without a seed). */
  public SeedResult seeded() {
    return tenant.getSeeded();
  }

  /** A client of its order service ({@link Licensing#orderClient}). */
  public licensing.order.ApiClient order() {
    return Licensing.orderClient(url(), appToken());
  }

  /** A client of its member center ({@link Licensing#memberClient}). */
  public licensing.member.ApiClient member() {
    return Licensing.memberClient(url(), clientToken(), userToken());
  }

  /** A client of its admin API, for any generated {@code licensing.sandbox.api} class. */
  public licensing.sandbox.ApiClient admin() {
    return Licensing.sandboxClient(url(), adminToken());
  }

  /** Reset, export, import and seeds. */
  public StateApi state() {
    return new StateApi(admin());
  }

  /** What its services received and answered. */
  public JournalApi journal() {
    return new JournalApi(admin());
  }

  /** Scripted faults. */
  public FaultsApi faults() {
    return new FaultsApi(admin());
  }

  /** Its clock. */
  public ClockApi clock() {
    return new ClockApi(admin());
  }

  /** Deletes it with everything it holds; safe to call twice. */
  @Override
  public void close() {
    if (deleted || !sandbox.running()) {
      return;
    }
    deleted = true;
    try {
      new TenantsApi(sandbox.admin()).deleteTenant(id());
    } catch (ApiException e) {
      if (e.getCode() != 404) {
        throw new IllegalStateException("cannot delete tenant " + id() + ": HTTP " + e.getCode(), e);
      }
    }
  }

  @Override
  public String toString() {
    // Its tokens stay out of logs and reports.
    return "Tenant[id=" + id() + ", url=" + url() + "]";
  }
}
