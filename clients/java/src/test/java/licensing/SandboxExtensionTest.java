package licensing;

import static licensing.Licensing.NONCE;
import static licensing.Licensing.check;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import licensing.junit.LicensingSandbox;
import licensing.junit.Sandbox;
import licensing.junit.Tenant;
import licensing.order.model.AllocateShellNumsRequest;
import licensing.sandbox.ApiException;
import licensing.sandbox.api.TenantsApi;
import licensing.sandbox.model.BuiltinSeed;
import licensing.sandbox.model.ClockAdvance;
import licensing.sandbox.model.ClockSetting;
import licensing.sandbox.model.Fault;
import licensing.sandbox.model.FaultRuleSpec;
import licensing.sandbox.model.ResetRequest;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/** The extension: one simulator, a tenant per test, the admin operations. */
@LicensingSandbox
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SandboxExtensionTest {
  private static Tenant first;
  private static Sandbox sandboxOfFirst;

  @Test
  @Order(1)
  void aTestGetsATenantOfItsOwnAndTheSameOneForEachParameter(Tenant tenant, Tenant again, Sandbox sandbox) {
    assertSame(tenant, again);
    assertTrue(tenant.id().matches("[0-9a-f]{32}"), tenant.id());
    assertTrue(sandbox.running());
    assertFalse(tenant.toString().contains(tenant.adminToken()), "no token in a tenant's string");
    assertFalse(sandbox.toString().contains(sandbox.adminToken()), "no token in a sandbox's string");
    assertEquals(null, tenant.seeded(), "no seed named: an empty tenant");
    first = tenant;
    sandboxOfFirst = sandbox;
  }

  @Test
  @Order(2)
  void theNextTestHasAnotherAndTheFirstIsGone(Tenant tenant, Sandbox sandbox) {
    assertSame(sandboxOfFirst, sandbox, "one simulator for the run");
    assertNotEquals(first.id(), tenant.id());
    ApiException gone = assertThrows(ApiException.class, () -> new TenantsApi(sandbox.admin()).getTenant(first.id()));
    assertEquals(404, gone.getCode(), "deleted when its test ended");
  }

  @Test
  @Order(3)
  void theAdminOperationsActOnTheTenantAlone(Tenant tenant, Sandbox sandbox) throws Exception {
    try (Tenant other = sandbox.tenant("beside", "demo")) {
      // A seed loaded: the same ids as the other's, seeded at its creation.
      var loaded = tenant.state().loadBuiltinSeed(BuiltinSeed.DEMO).getEnterprises().get(0);
      assertEquals("Acme Robotics", loaded.getName());
      assertEquals(other.seeded().getEnterprises().get(0).getEnterpriseGlobalId(), loaded.getEnterpriseGlobalId());
      // Clock: set frozen, advanced.
      tenant.clock().setClock(new ClockSetting().now(1_767_225_600_000L).frozen(true));
      assertEquals(1_767_225_660_000L, tenant.clock().advanceClock(new ClockAdvance().ms(60_000L)).getNow());
      assertNotEquals(1_767_225_660_000L, other.clock().getClock().getNow(), "the other tenant's clock");
      // Faults: a rule here does not fire there.
      tenant.faults().createFault(new FaultRuleSpec().operation("allocateShellNums")
          .fault(new Fault().kind(Fault.KindEnum.CODE).code("500")));
      assertEquals(1, tenant.faults().listFaults().size());
      assertEquals(List.of(), other.faults().listFaults());
      AllocateShellNumsRequest one = new AllocateShellNumsRequest().size(1);
      Operations.refused("500", () -> new Operations(tenant).assets.allocateShellNumsWithHttpInfo(NONCE, one));
      assertEquals(1, check(new Operations(other).assets.allocateShellNumsWithHttpInfo(NONCE, one)).getData().size());
      // Journal: each has its own.
      assertEquals(List.of("allocateShellNums 299 500"), journal(tenant));
      assertEquals(List.of("allocateShellNums 200 0"), journal(other));
      tenant.journal().clearJournal();
      assertEquals(List.of(), journal(tenant));
      tenant.faults().clearFaults();
      assertEquals(List.of(), tenant.faults().listFaults());
      // Reset: the seeded enterprise is gone here, and still there beside.
      String acme = other.seeded().getEnterprises().get(0).getEnterpriseGlobalId();
      assertTrue(employees(tenant, acme) > 0);
      tenant.state().reset(new ResetRequest());
      assertEquals(0, employees(tenant, acme));
      assertTrue(employees(other, acme) > 0);
    }
  }

  private static int employees(Tenant tenant, String enterprise) throws Exception {
    return check(new Operations(tenant).members.listMembersWithHttpInfo(enterprise, NONCE, 1, 10, null, null))
        .getData().getTotal();
  }

  private static List<String> journal(Tenant tenant) throws ApiException {
    return tenant.journal().listJournal(null, null, null, null, null).getEntries().stream()
        .map(e -> e.getOperation() + " " + e.getStatus() + " " + e.getCode()).toList();
  }

  @Test
  void anUnknownSeedIsRefusedNamingIt(Sandbox sandbox) {
    IllegalArgumentException error = assertThrows(IllegalArgumentException.class, () -> sandbox.tenant(null, "nonesuch"));
    assertTrue(error.getMessage().startsWith("seed: \"nonesuch\" is not a built-in seed ("), error.getMessage());
  }
}
