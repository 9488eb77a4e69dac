package licensing;

import static licensing.Licensing.NONCE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import licensing.junit.Tenant;
import licensing.member.api.MembersApi;
import licensing.member.model.MemberListItem;
import licensing.member.model.MemberPage;
import licensing.order.api.AssetsApi;
import licensing.order.api.EnterpriseApi;
import licensing.order.api.OrdersApi;
import licensing.order.model.Asset;
import licensing.order.model.BatchOrderRequest;
import licensing.order.model.BatchOrderResultItem;
import licensing.order.model.BindEnterpriseRequest;
import licensing.order.model.CreateEnterpriseRequest;
import licensing.order.model.CreateEnterpriseResult;
import licensing.order.model.LicenseOrder;
import licensing.order.model.LicenseType;
import licensing.order.model.LockRequest;
import licensing.order.model.LockResultItem;
import licensing.order.model.NewBuyOrder;
import licensing.order.model.Product;
import licensing.order.model.SyncMode;
import licensing.order.model.Trial;
import org.junit.jupiter.api.function.Executable;

/** The calls the tests share, through the generated clients and the helper. */
final class Operations {
  final EnterpriseApi enterprise;
  final OrdersApi orders;
  final AssetsApi assets;
  final MembersApi members;
  final licensing.member.api.AssetsApi memberAssets;

  Operations(Tenant tenant) {
    licensing.order.ApiClient order = tenant.order();
    licensing.member.ApiClient member = tenant.member();
    enterprise = new EnterpriseApi(order);
    orders = new OrdersApi(order);
    assets = new AssetsApi(order);
    members = new MembersApi(member);
    memberAssets = new licensing.member.api.AssetsApi(member);
  }

  /** A generated call that may throw the generated client's checked exception. */
  interface Call<T> {
    T call() throws Exception;
  }

  /** The business exception {@code call} (its reply read by {@link Licensing#check}) must end with, with this code, HTTP 299. */
  static BusinessException refused(String code, Call<?> call) {
    Executable executable = () -> {
      Object reply = call.call();
      if (reply instanceof licensing.order.ApiResponse<?> order) {
        Licensing.check(order);
      } else if (reply instanceof licensing.member.ApiResponse<?> member) {
        Licensing.check(member);
      }
    };
    BusinessException error = assertThrows(BusinessException.class, executable, "expected business error " + code);
    assertEquals(299, error.status(), "a business exception is HTTP 299");
    assertEquals(code, error.code(), error.getMessage());
    return error;
  }

  static BindEnterpriseRequest binding(String customer) {
    return new BindEnterpriseRequest().channelCode("CH01").channelCustomerId(customer)
        .customerName("Globex Engineering (CH01)").branchName("South").enterpriseName("Globex Engineering")
        .passwordMobile("13800000000");
  }

  CreateEnterpriseResult createGlobex() throws Exception {
    return Licensing.check(enterprise.createEnterpriseWithHttpInfo(NONCE, new CreateEnterpriseRequest()
        .crmCustomerId("CRM-GLOBEX").customerName("Globex Engineering").branchName("South")
        .address("12 Harbour Road"))).getData();
  }

  static Product product(String num, String uri, int nodes) {
    return new Product().crmProductId("P-" + num + "-" + uri).parentCrmProductId("A-" + num).productUri(uri)
        .productName(uri + " license").productType("software").limitConcurrent(nodes).limitTimeDuration(0L)
        .trial(Trial.NotTrial).trialEndDate(0L).timeUnit("year").timeUnitQuantity(1)
        .timeDurationExpression("1-0-0").productFeatures(List.of());
  }

  static NewBuyOrder newBuy(int sequence, String customerId, String eg, LicenseType type, Asset asset) {
    return new NewBuyOrder().sequence(sequence).customerId(customerId).crmCustomerId("CRM-GLOBEX")
        .customerName("Globex Engineering").channelCustomerId("CC-GLOBEX").adminName("Ada Admin")
        .adminAccount("ada").adminEmail("ada@example.com").adminCellNumber("13800000000")
        .passwordMobile("13800000000").address("12 Harbour Road")
        .customerType(licensing.order.model.CustomerType.COMPANY).branchCode("BR01").branchName("South")
        .enterpriseGlobalId(eg).licenseType(type).orderType(NewBuyOrder.OrderTypeEnum.NEW_BUY).assets(List.of(asset));
  }

  List<BatchOrderResultItem> batch(String appKey, String channelOrderId, List<LicenseOrder> list) throws Exception {
    List<BatchOrderResultItem> results = Licensing.check(orders.batchOrderWithHttpInfo(appKey, NONCE,
        new BatchOrderRequest().channelCode("CH01").channelOrderId(channelOrderId).syncMode(SyncMode.SYNC)
            .orderList(list))).getData();
    assertEquals(list.size(), results.size(), "one result per order");
    return results;
  }

  List<LockResultItem> lock(boolean disable, List<String> nums) throws Exception {
    LockRequest body = new LockRequest().assetNums(nums).operatorIdentity("ops@example.com");
    return disable
        ? Licensing.check(assets.disableLocksWithHttpInfo(NONCE, body)).getData()
        : Licensing.check(assets.enableLocksWithHttpInfo(NONCE, body)).getData();
  }

  MemberPage page(String eg, int pageNum, int pageSize, String keyword) throws Exception {
    return Licensing.check(members.listMembersWithHttpInfo(eg, NONCE, pageNum, pageSize, null, keyword)).getData();
  }

  /** Every employee of {@code eg}, page after page of {@code pageSize}; the pages read. */
  int everyPage(String eg, int pageSize, List<MemberListItem> into) throws Exception {
    int pages = 0;
    while (true) {
      MemberPage page = page(eg, pages + 1, pageSize, null);
      pages++;
      assertEquals(pages, page.getPageNum());
      assertEquals(page.getList().size(), page.getSize());
      into.addAll(page.getList());
      if (!page.getHasNextPage()) {
        assertEquals(true, page.getIsLastPage());
        assertEquals(into.size(), page.getTotal());
        assertEquals(pages, page.getPages());
        return pages;
      }
    }
  }
}
