package licensing;

import static licensing.Licensing.NONCE;
import static licensing.Licensing.check;
import static licensing.Operations.binding;
import static licensing.Operations.newBuy;
import static licensing.Operations.product;
import static licensing.Operations.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import licensing.junit.LicensingSandbox;
import licensing.junit.Tenant;
import licensing.member.model.AddMembersRequest;
import licensing.member.model.ConfigureAssetsRequest;
import licensing.member.model.EditMemberRequest;
import licensing.member.model.LendAssetsRequest;
import licensing.member.model.NewMember;
import licensing.member.model.ResetPasswordRequest;
import licensing.order.model.AllocateShellNumsRequest;
import licensing.order.model.Asset;
import licensing.order.model.CreateEnterpriseRequest;
import licensing.order.model.DefaultCustomer;
import licensing.order.model.LicenseOrder;
import licensing.order.model.LicenseType;
import licensing.order.model.LockRequest;
import licensing.order.model.LockStatus;
import licensing.order.model.UpdateEnterpriseRequest;
import licensing.sandbox.model.Fault;
import licensing.sandbox.model.FaultRule;
import licensing.sandbox.model.FaultRuleSpec;
import licensing.sandbox.model.JournalEntry;
import licensing.sandbox.model.SeededEnterprise;
import org.junit.jupiter.api.Test;

/** A business error from every operation, read as such; a retry-safe call sent again. */
@LicensingSandbox(seed = "demo")
class FaultsAndRetriesTest {
  @Test
  void everyOperationsBusinessErrorIsReadWithItsCode(Tenant tenant) throws Exception {
    Operations ops = new Operations(tenant);
    SeededEnterprise acme = tenant.seeded().getEnterprises().get(0);
    String eg = acme.getEnterpriseGlobalId();
    String carol = acme.getMembers().get("carol");
    String lock = acme.getAssets().get("cad-lock-2").getAssetNum();
    String assetId = acme.getAssets().get("cad-lock-2").getAssetId();
    String customer = acme.getCustomers().values().iterator().next();
    LockRequest locks = new LockRequest().assetNums(List.of(lock)).operatorIdentity("ops@example.com");
    Map<String, Operations.Call<?>> calls = new LinkedHashMap<>();
    calls.put("bindEnterprise", () -> ops.enterprise.bindEnterpriseWithHttpInfo(NONCE, binding("CC-NEW")));
    calls.put("createEnterprise", () -> ops.enterprise.createEnterpriseWithHttpInfo(NONCE, new CreateEnterpriseRequest()
        .crmCustomerId("CRM-1").customerName("Initech").branchName("North").address("1 Road")));
    calls.put("queryEnterprise", () -> ops.enterprise.queryEnterpriseWithHttpInfo(NONCE, "CH01", "CC-ACME", DefaultCustomer.All));
    calls.put("updateEnterprise", () -> ops.enterprise.updateEnterpriseWithHttpInfo(NONCE, new UpdateEnterpriseRequest()
        .crmCustomerId("CRM-1").customerName("Initech").branchName("North").address("2 Road")));
    calls.put("batchOrder", () -> ops.orders.batchOrderWithHttpInfo("faults-java", NONCE,
        new licensing.order.model.BatchOrderRequest().channelCode("CH01").channelOrderId("CO-F")
            .syncMode(licensing.order.model.SyncMode.SYNC).orderList(List.of(new LicenseOrder(newBuy(1, customer, eg,
                LicenseType.NORMAL_RECOVER_USBKEY, new Asset().assetNos(List.of("8000000999"))
                    .products(List.of(product("8000000999", "CAD", 1)))))))));
    calls.put("disableLocks", () -> ops.assets.disableLocksWithHttpInfo(NONCE, locks));
    calls.put("enableLocks", () -> ops.assets.enableLocksWithHttpInfo(NONCE, locks));
    calls.put("listVirtualAssets", () -> ops.assets.listVirtualAssetsWithHttpInfo(eg, NONCE, null));
    calls.put("allocateShellNums", () -> ops.assets.allocateShellNumsWithHttpInfo(NONCE, new AllocateShellNumsRequest().size(1)));
    calls.put("addMembers", () -> ops.members.addMembersWithHttpInfo(eg, NONCE, new AddMembersRequest()
        .userList(List.of(new NewMember().userName("zed").name("Zed").password("Initial-Pass-9")))));
    calls.put("editMember", () -> ops.members.editMemberWithHttpInfo(eg, carol, NONCE,
        new EditMemberRequest().userName("carol").name("Carol")));
    calls.put("resetMemberPassword", () -> ops.members.resetMemberPasswordWithHttpInfo(eg, carol, NONCE,
        new ResetPasswordRequest().password("New-Pass-2026")));
    calls.put("deleteMember", () -> ops.members.deleteMemberWithHttpInfo(eg, carol, NONCE));
    calls.put("listMembers", () -> ops.members.listMembersWithHttpInfo(eg, NONCE, 1, 10, null, null));
    calls.put("listAssetNums", () -> ops.memberAssets.listAssetNumsWithHttpInfo(eg, NONCE));
    calls.put("listAssetProducts", () -> ops.memberAssets.listAssetProductsWithHttpInfo(assetId, NONCE));
    calls.put("listLentLocks", () -> ops.memberAssets.listLentLocksWithHttpInfo(eg, NONCE));
    calls.put("configureMemberAssets", () -> ops.memberAssets.configureMemberAssetsWithHttpInfo(carol, NONCE,
        new ConfigureAssetsRequest().addAssets(List.of()).deleteAssets(List.of())));
    calls.put("lendAssets", () -> ops.memberAssets.lendAssetsWithHttpInfo(carol, NONCE,
        new LendAssetsRequest().borrowedUsbKey(lock).assetIDs(List.of(assetId))));
    assertEquals(JournalCheck.operations("order").size() + JournalCheck.operations("member").size(), calls.size(),
        "one call for each operation of the specs");

    for (Map.Entry<String, Operations.Call<?>> call : calls.entrySet()) {
      // "500" is a code every operation of both services documents.
      FaultRule rule = tenant.faults().createFault(new FaultRuleSpec().operation(call.getKey()).times(1L)
          .fault(new Fault().kind(Fault.KindEnum.CODE).code("500")));
      BusinessException error = refused("500", call.getValue());
      assertEquals(1L, tenant.faults().getFault(rule.getId()).getHits(), call.getKey() + "'s rule fired once");
      assertNotEquals("", error.message(), call.getKey());
    }
    Map<String, String> answered = tenant.journal().listJournal(null, null, null, null, null).getEntries().stream()
        .collect(Collectors.toMap(JournalEntry::getOperation, e -> e.getStatus() + " " + e.getCode(), (x, y) -> x + ", " + y));
    calls.keySet().forEach(op -> assertEquals("299 500", answered.get(op), op));
  }

  @Test
  void aRetrySafeCallWhoseReplyWasLostIsSentAgainWithAFreshNonce(Tenant tenant) throws Exception {
    Operations ops = new Operations(tenant);
    String lock = tenant.seeded().getEnterprises().get(0).getAssets().get("cad-lock-2").getAssetNum();
    // disableLocks is x-idempotent: it sets a state, so a repeat after a lost reply is safe.
    tenant.faults().createFault(new FaultRuleSpec().operation("disableLocks").times(1L)
        .fault(new Fault().kind(Fault.KindEnum.DROP_CONNECTION)));
    licensing.order.ApiException lost = assertThrows(licensing.order.ApiException.class, () -> ops.lock(true, List.of(lock)));
    assertInstanceOf(IOException.class, lost.getCause(), "the connection closed without a reply");
    assertEquals(LockStatus.Success, ops.lock(true, List.of(lock)).get(0).getStatus(), "sent again, answered");

    List<JournalEntry> attempts = tenant.journal().listJournal("disableLocks", null, null, null, null).getEntries();
    assertEquals(2, attempts.size());
    assertNotEquals(nonce(attempts.get(0)), nonce(attempts.get(1)), "each attempt has its own g_nonce");

    // The same nonce sent twice is a replay: what a retry with a constant nonce would get.
    licensing.order.ApiClient constant = new licensing.order.ApiClient();
    constant.updateBaseUri(tenant.url());
    constant.setObjectMapper(Licensing.strict(constant.getObjectMapper()));
    constant.setRequestInterceptor(b -> b.setHeader("Authorization", "Bearer " + tenant.appToken())
        .setHeader("Content-Type", "application/json"));
    licensing.order.api.AssetsApi replaying = new licensing.order.api.AssetsApi(constant);
    LockRequest body = new LockRequest().assetNums(List.of(lock)).operatorIdentity("ops@example.com");
    check(replaying.disableLocksWithHttpInfo("the-same-nonce", body));
    refused("13004", () -> replaying.disableLocksWithHttpInfo("the-same-nonce", body));
  }

  private static String nonce(JournalEntry entry) {
    return entry.getQuery().stream().filter(q -> q.getName().equals("g_nonce")).findFirst().orElseThrow().getValue();
  }
}
