package licensing;

import static licensing.Licensing.NONCE;
import static licensing.Licensing.check;
import static licensing.Operations.binding;
import static licensing.Operations.newBuy;
import static licensing.Operations.product;
import static licensing.Operations.refused;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import licensing.junit.LicensingSandbox;
import licensing.junit.Tenant;
import licensing.member.model.AddMembersRequest;
import licensing.member.model.AddMembersResult;
import licensing.member.model.ConfigureAssetsRequest;
import licensing.member.model.EditMemberRequest;
import licensing.member.model.EnterpriseAsset;
import licensing.member.model.LendAssetsRequest;
import licensing.member.model.LentLock;
import licensing.member.model.Member;
import licensing.member.model.MemberListItem;
import licensing.member.model.NewMember;
import licensing.member.model.ProductInstance;
import licensing.member.model.ResetPasswordRequest;
import licensing.order.model.AllocateShellNumsRequest;
import licensing.order.model.Asset;
import licensing.order.model.AssetExtension;
import licensing.order.model.BatchOrderResultItem;
import licensing.order.model.CreateEnterpriseResult;
import licensing.order.model.DefaultCustomer;
import licensing.order.model.DeleteAssetOrder;
import licensing.order.model.DeleteProductOrder;
import licensing.order.model.EnterpriseCustomer;
import licensing.order.model.KeyChipType;
import licensing.order.model.LicenseOrder;
import licensing.order.model.LicenseType;
import licensing.order.model.LockResultItem;
import licensing.order.model.LockStatus;
import licensing.order.model.RevokedAsset;
import licensing.order.model.RevokedProduct;
import licensing.order.model.RevokedProductAsset;
import licensing.order.model.UpdateEnterpriseRequest;
import licensing.order.model.VirtualAsset;
import licensing.sandbox.model.SeededAsset;
import licensing.sandbox.model.SeededEnterprise;
import org.junit.jupiter.api.Test;

/**
 * Every operation of both services through the generated clients, in the story the
 * TypeScript and Python scenarios tell ({@code clients/python/tests/scenario.py}; keep them
 * in step), each value decoded and asserted; then the tenant's journal read as {@code cargo
 * xtask clients --test} reads theirs ({@link JournalCheck}).
 */
@LicensingSandbox(seed = "demo")
class EveryOperationTest {
  private static final String MISSING = "8999999999";

  @Test
  void everyOperationAnswersThroughTheGeneratedClients(Tenant tenant) throws Exception {
    Operations ops = new Operations(tenant);
    SeededEnterprise acmeSeed = tenant.seeded().getEnterprises().get(0);
    assertEquals("Acme Robotics", acmeSeed.getName());

    // ------------------------------------------------------------ order service: enterprise
    CreateEnterpriseResult created = ops.createGlobex();
    String eg = created.getEnterpriseGlobalId();
    assertTrue(eg.startsWith("EG-"), eg);
    assertEquals(true, created.getDefaultType());
    assertEquals(List.of("cloud_employee", "industry_admin"),
        created.getMembers().stream().map(m -> m.getMemberIdentity()).sorted().collect(Collectors.toList()));

    EnterpriseCustomer bound = check(ops.enterprise.bindEnterpriseWithHttpInfo(NONCE, binding("CC-GLOBEX"))).getData();
    assertEquals(eg, bound.getEnterpriseGlobalId(), "the customer joined the created enterprise");
    assertEquals(false, bound.getIsDefault());
    String cid = bound.getCustomerId();

    BusinessException again = refused("13004", () -> ops.enterprise.bindEnterpriseWithHttpInfo(NONCE, binding("CC-GLOBEX")));
    assertTrue(again.cause().contains("already bound"), again.getMessage());

    List<EnterpriseCustomer> all = check(ops.enterprise.queryEnterpriseWithHttpInfo(NONCE, "CH01", "CC-GLOBEX", DefaultCustomer.All)).getData();
    List<EnterpriseCustomer> ours = all.stream().filter(c -> c.getChannelCustomerId().equals("CC-GLOBEX")).collect(Collectors.toList());
    assertEquals(1, ours.size());
    assertEquals(cid, ours.get(0).getCustomerId());
    List<EnterpriseCustomer> defaults = check(ops.enterprise.queryEnterpriseWithHttpInfo(NONCE, "CH01", "CC-GLOBEX", DefaultCustomer.OnlyDefault)).getData();
    assertEquals(1, defaults.size());
    assertTrue(defaults.get(0).getIsDefault());

    licensing.order.model.UpdateEnterpriseReply updated = check(ops.enterprise.updateEnterpriseWithHttpInfo(NONCE,
        new UpdateEnterpriseRequest().crmCustomerId("CRM-GLOBEX").customerName("Globex Engineering")
            .branchName("South Quay").address("1 Quay Street")));
    assertEquals("success", updated.getMessage());

    // ------------------------------------------------------------ order service: batch
    List<String> numbers = check(ops.assets.allocateShellNumsWithHttpInfo(NONCE, new AllocateShellNumsRequest().size(4))).getData();
    assertEquals(4, numbers.size());
    assertTrue(numbers.stream().allMatch(n -> n.matches("8[0-9]{9}")), numbers.toString());
    assertEquals(numbers.stream().sorted().collect(Collectors.toList()), numbers, "increasing");
    String a = numbers.get(0), b = numbers.get(1), c = numbers.get(2), d = numbers.get(3);

    List<BatchOrderResultItem> midMonth = ops.batch("scenario-java", "CO-2026-01-17", List.of(
        new LicenseOrder(newBuy(1, cid, eg, LicenseType.NORMAL_RECOVER_USBKEY,
            new Asset().assetNos(List.of(a)).products(List.of(product(a, "CAD", 5), product(a, "RENDER", 2))))),
        new LicenseOrder(newBuy(2, cid, eg, LicenseType.NORMAL_RECOVER_USBKEY,
            new Asset().assetNos(List.of(b)).products(List.of(product(b, "CAD", 5)))))));
    String orderOfA = midMonth.stream().filter(r -> r.getSequence() == 1).findFirst().orElseThrow().getLicenseOrderId();
    assertTrue(orderOfA.startsWith("LO-"), orderOfA);

    Asset cloudAsset = new Asset().assetNos(List.of(d))
        .assetExtendList(List.of(new AssetExtension().extendCode("gxxp").extendValue("true")))
        .products(List.of(product(d, "CLOUD", 10)));
    List<BatchOrderResultItem> monthEnd = ops.batch("scenario-java", "CO-2026-01-31", List.of(
        new LicenseOrder(newBuy(1, cid, eg, LicenseType.NORMAL_RECOVER_USBKEY,
            new Asset().assetNos(List.of(c)).products(List.of(product(c, "VIEWER", 1))))),
        new LicenseOrder(newBuy(2, cid, eg, LicenseType.CLOUD_CUSTOMER, cloudAsset).srcLicenseOrderId(orderOfA)),
        new LicenseOrder(new DeleteAssetOrder().sequence(3).customerId(cid).enterpriseGlobalId(eg)
            .licenseType(LicenseType.NORMAL_RECOVER_USBKEY).orderType(DeleteAssetOrder.OrderTypeEnum.DELETE_ASSET)
            .assets(List.of(new RevokedAsset().assetNos(List.of(b))))),
        new LicenseOrder(new DeleteProductOrder().sequence(4).customerId(cid).enterpriseGlobalId(eg)
            .licenseType(LicenseType.NORMAL_RECOVER_USBKEY).orderType(DeleteProductOrder.OrderTypeEnum.DELETE_PRODUCT)
            .srcLicenseOrderId(orderOfA)
            .assets(List.of(new RevokedProductAsset().assetNos(List.of(a)).products(List.of(
                new RevokedProduct().crmProductId("P-" + a + "-RENDER").productUri("RENDER").limitConcurrent(2))))))));
    assertTrue(monthEnd.stream().allMatch(r -> r.getCustomerId().equals(cid)));

    // ------------------------------------------------------------ order service: assets, locks
    List<VirtualAsset> cloud = check(ops.assets.listVirtualAssetsWithHttpInfo(eg, NONCE, "gxxp")).getData();
    assertEquals(1, cloud.size());
    VirtualAsset va = cloud.get(0);
    assertEquals(d, va.getAssetNum());
    assertEquals(LicenseType.CLOUD_CUSTOMER, va.getLicenseType());
    assertEquals(KeyChipType.FifthGeneration, va.getKeyChipType());
    assertEquals(false, va.getBorrowedUsbKey());
    assertEquals("gxxp", va.getAssetExtends().get(0).getExtendCode());
    assertEquals(List.of(), check(ops.assets.listVirtualAssetsWithHttpInfo(eg, NONCE, "none-such")).getData());
    assertEquals(1, check(ops.assets.listVirtualAssetsWithHttpInfo(eg, NONCE, null)).getData().size());

    // b was revoked; d is no lock.
    assertEquals(Map.of(a, LockStatus.Success, b, LockStatus.LockNotFound, d, LockStatus.WrongLockType, MISSING, LockStatus.LockNotFound),
        statuses(ops.lock(true, List.of(a, b, d, MISSING))));
    assertEquals(Map.of(a, LockStatus.Success, c, LockStatus.Success), statuses(ops.lock(false, List.of(a, c))));

    // ------------------------------------------------------------ member center: employees
    BusinessException partial = refused("60027", () -> ops.members.addMembersWithHttpInfo(eg, NONCE, new AddMembersRequest().userList(List.of(
        new NewMember().userName("dave").name("Dave").password("Initial-Pass-4").remark("night shift")
            .passwordMobile("13900000000").departmentId(7L),
        new NewMember().userName("erin").name("Erin").password("Initial-Pass-5"),
        new NewMember().userName("bad_name").name("Mallory").password("Initial-Pass-6")))));
    AddMembersResult result = partial.reply(licensing.member.model.AddMembersReply.class).getData();
    assertEquals(List.of("dave", "erin"),
        result.getSucceeded().stream().map(m -> m.getUserName().split("@")[0]).collect(Collectors.toList()));
    Member dave = result.getSucceeded().get(0), erin = result.getSucceeded().get(1);
    assertEquals(7L, dave.getDepartmentId());
    assertEquals("night shift", dave.getRemark());
    assertEquals("bad_name", result.getFailed().get(0).getUserName().split("@")[0]);
    assertTrue(result.getFailed().get(0).getMessage().contains("letters and digits"));

    refused("50003", () -> ops.members.addMembersWithHttpInfo(eg, NONCE,
        new AddMembersRequest().userList(List.of(new NewMember().userName("gina").name("Gina").password("abc")))));
    AddMembersResult gina = check(ops.members.addMembersWithHttpInfo(eg, NONCE,
        new AddMembersRequest().userList(List.of(new NewMember().userName("gina").name("Gina").password("Initial-Pass-7"))))).getData();
    assertEquals(1, gina.getSucceeded().size());
    assertEquals(List.of(), gina.getFailed());

    List<MemberListItem> everyone = new ArrayList<>();
    int pages = ops.everyPage(eg, 2, everyone);
    assertEquals(5, everyone.size(), "the two employees created with the enterprise, dave, erin and gina");
    assertEquals(3, pages);
    assertEquals(5, everyone.stream().map(MemberListItem::getGlobalId).distinct().count());
    assertEquals(List.of(), ops.page(eg, pages + 1, 2, null).getList());

    check(ops.members.editMemberWithHttpInfo(eg, dave.getGlobalId(), NONCE,
        new EditMemberRequest().userName("dave").name("Dave Smith").departmentId(8L).remark("day shift")));
    List<MemberListItem> found = ops.page(eg, 1, 2, "smith").getList();
    assertEquals(1, found.size());
    assertEquals("Dave Smith", found.get(0).getName());
    assertEquals(8L, found.get(0).getDepartmentId());
    assertEquals("day shift", found.get(0).getRemark());

    refused("50003", () -> ops.members.resetMemberPasswordWithHttpInfo(eg, erin.getGlobalId(), NONCE, new ResetPasswordRequest().password("abc")));
    check(ops.members.resetMemberPasswordWithHttpInfo(eg, erin.getGlobalId(), NONCE, new ResetPasswordRequest().password("New-Pass-2026")));

    check(ops.members.deleteMemberWithHttpInfo(eg, erin.getGlobalId(), NONCE));
    refused("60002", () -> ops.members.deleteMemberWithHttpInfo(eg, erin.getGlobalId(), NONCE));

    // ------------------------------------------------------------ member center: assets, lending
    List<EnterpriseAsset> globexAssets = check(ops.memberAssets.listAssetNumsWithHttpInfo(eg, NONCE)).getData();
    assertEquals(List.of(a, c, d), globexAssets.stream().map(EnterpriseAsset::getAssetNum).sorted().collect(Collectors.toList()));
    EnterpriseAsset assetA = globexAssets.stream().filter(x -> x.getAssetNum().equals(a)).findFirst().orElseThrow();
    assertEquals(List.of("CAD"), products(ops, assetA.getAssetId()), "RENDER was revoked");

    String acme = acmeSeed.getEnterpriseGlobalId();
    List<LentLock> lent = check(ops.memberAssets.listLentLocksWithHttpInfo(acme, NONCE)).getData();
    assertEquals(1, lent.size());
    LentLock lentLock = lent.get(0);
    assertEquals(acmeSeed.getAssets().get("lent-lock").getAssetNum(), lentLock.getAssetNum());
    assertEquals(false, lentLock.getBorrowedFlag());
    assertNull(lentLock.getCloudAccountGlobalId());

    String carol = acmeSeed.getMembers().get("carol"), alice = acmeSeed.getMembers().get("alice");
    SeededAsset bobsLock = acmeSeed.getAssets().get("cad-lock-2");
    check(ops.memberAssets.configureMemberAssetsWithHttpInfo(carol, NONCE,
        new ConfigureAssetsRequest().addAssets(List.of(bobsLock.getAssetNum())).deleteAssets(List.of())));
    EnterpriseAsset held = check(ops.memberAssets.listAssetNumsWithHttpInfo(acme, NONCE)).getData().stream()
        .filter(x -> x.getAssetNum().equals(bobsLock.getAssetNum())).findFirst().orElseThrow();
    assertEquals(carol, held.getCloudAccountGlobalId());

    LendAssetsRequest lendBobs = new LendAssetsRequest().borrowedUsbKey(lentLock.getAssetNum()).assetIDs(List.of(bobsLock.getAssetId()));
    assertEquals(Map.of(lentLock.getAssetNum(), LockStatus.Success), statuses(ops.lock(true, List.of(lentLock.getAssetNum()))));
    assertFalse(refused("33008", () -> ops.memberAssets.lendAssetsWithHttpInfo(carol, NONCE, lendBobs)).message().isEmpty());
    assertEquals(Map.of(lentLock.getAssetNum(), LockStatus.Success), statuses(ops.lock(false, List.of(lentLock.getAssetNum()))));
    check(ops.memberAssets.lendAssetsWithHttpInfo(carol, NONCE, lendBobs));

    LentLock loan = check(ops.memberAssets.listLentLocksWithHttpInfo(acme, NONCE)).getData().get(0);
    assertEquals(true, loan.getBorrowedFlag());
    assertEquals(carol, loan.getCloudAccountGlobalId());
    assertEquals(List.of("cad", "viewer"), products(ops, lentLock.getAssetId()));
    refused("33018", () -> ops.memberAssets.lendAssetsWithHttpInfo(alice, NONCE, new LendAssetsRequest()
        .borrowedUsbKey(lentLock.getAssetNum()).assetIDs(List.of(acmeSeed.getAssets().get("cad-lock-1").getAssetId()))));

    JournalCheck.everyOperationAnswered(tenant);
  }

  private static Map<String, LockStatus> statuses(List<LockResultItem> results) {
    return results.stream().collect(Collectors.toMap(LockResultItem::getAssetNum, LockResultItem::getStatus));
  }

  private static List<String> products(Operations ops, String assetId) throws Exception {
    return check(ops.memberAssets.listAssetProductsWithHttpInfo(assetId, NONCE)).getData().getProductInstanceList()
        .stream().map(ProductInstance::getProductUri).sorted().collect(Collectors.toList());
  }
}
