package licensing;

import static licensing.Licensing.NONCE;
import static licensing.Licensing.check;
import static licensing.Operations.binding;
import static licensing.Operations.newBuy;
import static licensing.Operations.product;
import static licensing.Operations.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import licensing.junit.LicensingSandbox;
import licensing.junit.Sandbox;
import licensing.junit.Tenant;
import licensing.member.model.AddMembersRequest;
import licensing.member.model.MemberListItem;
import licensing.member.model.MemberPage;
import licensing.member.model.NewMember;
import licensing.order.model.AllocateShellNumsRequest;
import licensing.order.model.Asset;
import licensing.order.model.BatchOrderResultItem;
import licensing.order.model.DeleteAssetOrder;
import licensing.order.model.LicenseOrder;
import licensing.order.model.LicenseType;
import licensing.order.model.LockStatus;
import licensing.order.model.RevokedAsset;
import org.junit.jupiter.api.Test;

/**
 * A partner's story against a sandbox the extension started: an enterprise, a mixed batch,
 * a lock disabled, an employee added, a business error read with its code, a second page.
 * Each test has a tenant of its own, so both may create the same customer.
 */
@LicensingSandbox(seed = "demo")
class PartnerStoryTest {
  @Test
  void aPartnersMonth(Tenant tenant) throws Exception {
    Operations ops = new Operations(tenant);
    String eg = ops.createGlobex().getEnterpriseGlobalId();
    String customer = check(ops.enterprise.bindEnterpriseWithHttpInfo(NONCE, binding("CC-GLOBEX"))).getData().getCustomerId();

    // A business error, read with its code, message and cause.
    BusinessException twice = refused("13004", () -> ops.enterprise.bindEnterpriseWithHttpInfo(NONCE, binding("CC-GLOBEX")));
    assertTrue(twice.message().startsWith("parameter validation failure"), twice.message());
    assertTrue(twice.cause().contains("already bound"), twice.cause());
    assertEquals("13004: " + twice.message() + " (" + twice.cause() + ")", twice.getMessage());

    List<String> nums = check(ops.assets.allocateShellNumsWithHttpInfo(NONCE, new AllocateShellNumsRequest().size(2))).getData();
    String kept = nums.get(0), revoked = nums.get(1);
    ops.batch("partner-java", "CO-1", List.of(
        new LicenseOrder(newBuy(1, customer, eg, LicenseType.NORMAL_RECOVER_USBKEY,
            new Asset().assetNos(List.of(kept)).products(List.of(product(kept, "CAD", 5))))),
        new LicenseOrder(newBuy(2, customer, eg, LicenseType.NORMAL_RECOVER_USBKEY,
            new Asset().assetNos(List.of(revoked)).products(List.of(product(revoked, "CAD", 1)))))));
    // A mixed batch: a purchase and a revocation.
    String third = check(ops.assets.allocateShellNumsWithHttpInfo(NONCE, new AllocateShellNumsRequest().size(1))).getData().get(0);
    List<BatchOrderResultItem> mixed = ops.batch("partner-java", "CO-2", List.of(
        new LicenseOrder(newBuy(1, customer, eg, LicenseType.NORMAL_RECOVER_USBKEY,
            new Asset().assetNos(List.of(third)).products(List.of(product(third, "VIEWER", 1))))),
        new LicenseOrder(new DeleteAssetOrder().sequence(2).customerId(customer).enterpriseGlobalId(eg)
            .licenseType(LicenseType.NORMAL_RECOVER_USBKEY).orderType(DeleteAssetOrder.OrderTypeEnum.DELETE_ASSET)
            .assets(List.of(new RevokedAsset().assetNos(List.of(revoked)))))));
    assertEquals(List.of(1, 2), mixed.stream().map(BatchOrderResultItem::getSequence).sorted().toList());

    // A lock disabled: the revoked one is no longer there.
    assertEquals(List.of(LockStatus.Success, LockStatus.LockNotFound),
        ops.lock(true, List.of(kept, revoked)).stream().map(r -> r.getStatus()).toList());

    // An employee added, then the second page of a list of pages of 2.
    check(ops.members.addMembersWithHttpInfo(eg, NONCE,
        new AddMembersRequest().userList(List.of(new NewMember().userName("alice").name("Alice").password("Initial-Pass-1")))));
    MemberPage first = ops.page(eg, 1, 2, null);
    MemberPage second = ops.page(eg, 2, 2, null);
    assertEquals(3, second.getTotal(), "the two employees created with the enterprise, and alice");
    assertEquals(true, first.getHasNextPage());
    assertEquals(2, second.getPageNum());
    assertEquals(1, second.getList().size());
    assertEquals(true, second.getIsLastPage());
    List<String> everyone = new ArrayList<>();
    first.getList().forEach(m -> everyone.add(m.getUserName()));
    second.getList().stream().map(MemberListItem::getUserName).forEach(everyone::add);
    assertEquals(3, everyone.stream().distinct().count(), everyone.toString());
    assertTrue(everyone.stream().anyMatch(name -> name.startsWith("alice")), everyone.toString());
  }

  @Test
  void eachTestHasATenantOfItsOwn(Tenant tenant, Sandbox sandbox) throws Exception {
    Operations ops = new Operations(tenant);
    // The other test bound CC-GLOBEX too, in its own tenant: here it is new.
    ops.createGlobex();
    check(ops.enterprise.bindEnterpriseWithHttpInfo(NONCE, binding("CC-GLOBEX")));
    assertTrue(tenant.url().startsWith(sandbox.url() + "/t/" + tenant.id()), tenant.url());
    assertNotEquals("sim-app-token", tenant.appToken(), "a tenant's tokens are its own");
    // Its token means nothing under the simulator's default tenant.
    licensing.order.api.EnterpriseApi defaultTenant =
        new licensing.order.api.EnterpriseApi(Licensing.orderClient(sandbox.url(), tenant.appToken()));
    refused("13004", () -> defaultTenant.queryEnterpriseWithHttpInfo(NONCE, "CH01", "CC-GLOBEX",
        licensing.order.model.DefaultCustomer.All));
  }
}
