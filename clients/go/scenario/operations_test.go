package scenario_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"example.com/licensing-sdk/clients/go/member"
	"example.com/licensing-sdk/clients/go/order"
	"example.com/licensing-sdk/clients/go/sandbox"
)

// missing is an asset number no asset has.
const missing = "8999999999"

// globex is what the order steps leave for the member steps.
type globex struct {
	eg, cid    string
	a, b, c, d string
}

// TestEveryOperation tells the TypeScript and Python scenarios' story through the Go
// client, on a tenant seeded with demo, asserting the decoded values and business codes;
// then its journal must show every operation of both specs answered with code 0, HTTP 299
// from each service and a fresh g_nonce on every request.
func TestEveryOperation(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{Seed: "demo"})
	o, m := sb.Order(), sb.Member()
	g := enterpriseSteps(t, o)
	batchSteps(t, o, &g)
	assetSteps(t, o, g)
	employeeSteps(t, m, g)
	lendingSteps(t, sb, o, m, g)
	checkJournal(t, sb.Journal())
}

func enterpriseSteps(t *testing.T, o *order.ClientWithResponses) globex {
	created := success(o.CreateEnterpriseWithResponse(ctx, nil, order.CreateEnterpriseRequest{
		CrmCustomerID: "CRM-GLOBEX", CustomerName: "Globex Engineering", BranchName: "South",
		Address: ptr("12 Harbour Road"),
	}))(t).JSON200.Data
	if !strings.HasPrefix(created.EnterpriseGlobalID, "EG-") || !created.DefaultType {
		t.Fatalf("createEnterprise: %+v", created)
	}
	identities := []string{}
	for _, m := range created.Members {
		identities = append(identities, m.MemberIdentity)
	}
	slices.Sort(identities)
	if !slices.Equal(identities, []string{"cloud_employee", "industry_admin"}) {
		t.Fatalf("createEnterprise members: %v", identities)
	}
	eg := created.EnterpriseGlobalID

	bind := order.BindEnterpriseRequest{
		ChannelCode: "CH01", ChannelCustomerID: "CC-GLOBEX", CustomerName: "Globex Engineering (CH01)",
		BranchName: "South", EnterpriseName: "Globex Engineering", PasswordMobile: "13800000000",
	}
	bound := success(o.BindEnterpriseWithResponse(ctx, nil, bind))(t).JSON200.Data
	if bound.EnterpriseGlobalID != eg || bound.IsDefault || bound.ChannelCustomerID != "CC-GLOBEX" {
		t.Fatalf("bindEnterprise: %+v", bound)
	}
	reply, again := refusal(o.BindEnterpriseWithResponse(ctx, nil, bind))(t, "13004")
	if !strings.Contains(again.Message, "already bound") || reply.JSON299 == nil || reply.JSON299.Message != again.Message {
		t.Fatalf("bindEnterprise again: %v, %+v", again, reply.JSON299)
	}

	query := func(which string) []order.EnterpriseCustomer {
		return *success(o.QueryEnterpriseWithResponse(ctx, &order.QueryEnterpriseParams{
			ChannelCode: "CH01", ChannelCustomerID: "CC-GLOBEX", DefaultCustomer: order.DefaultCustomer(which),
		}))(t).JSON200.Data
	}
	all := query("N")
	ours := slices.IndexFunc(all, func(c order.EnterpriseCustomer) bool { return c.ChannelCustomerID == "CC-GLOBEX" })
	if ours < 0 || all[ours].CustomerID != bound.CustomerID || all[ours].EnterpriseGlobalID != eg {
		t.Fatalf("queryEnterprise N: %+v", all)
	}
	defaults := query("Y")
	if len(defaults) != 1 || !defaults[0].IsDefault || defaults[0].CustomerID == bound.CustomerID {
		t.Fatalf("queryEnterprise Y: %+v", defaults)
	}

	updated := success(o.UpdateEnterpriseWithResponse(ctx, nil, order.UpdateEnterpriseRequest{
		CrmCustomerID: "CRM-GLOBEX", CustomerName: "Globex Engineering", BranchName: "South Quay",
		Address: ptr("1 Quay Street"),
	}))(t).JSON200
	if updated.Message != "success" {
		t.Fatalf("updateEnterprise: %+v", updated)
	}

	numbers := *success(o.AllocateShellNumsWithResponse(ctx, nil, order.AllocateShellNumsRequest{Size: 4}))(t).JSON200.Data
	if len(numbers) != 4 || !slices.IsSorted(numbers) {
		t.Fatalf("allocateShellNums: %v", numbers)
	}
	for _, n := range numbers {
		if len(n) != 10 || n[0] != '8' {
			t.Fatalf("allocateShellNums: %v", numbers)
		}
	}
	return globex{eg: eg, cid: bound.CustomerID, a: numbers[0], b: numbers[1], c: numbers[2], d: numbers[3]}
}

func product(num, uri string, nodes int32) order.Product {
	return order.Product{
		CrmProductID: "P-" + num + "-" + uri, ParentCrmProductID: "A-" + num, ProductURI: uri,
		ProductName: uri + " license", ProductType: "software", LimitConcurrent: nodes,
		TimeUnit: "year", TimeUnitQuantity: 1, TimeDurationExpression: "1-0-0",
		ProductFeatures: []order.ProductFeature{},
	}
}

func newBuy(t *testing.T, g globex, sequence int32, licenseType string, asset order.Asset, src *string) order.LicenseOrder {
	var lo order.LicenseOrder
	err := lo.FromNewBuyOrder(order.NewBuyOrder{
		Sequence: sequence, CustomerID: g.cid, CrmCustomerID: "CRM-GLOBEX", CustomerName: "Globex Engineering",
		ChannelCustomerID: "CC-GLOBEX", AdminName: "Ada Admin", AdminAccount: "ada", AdminEmail: "ada@example.com",
		AdminCellNumber: "13800000000", PasswordMobile: "13800000000", Address: "12 Harbour Road",
		CustomerType: "company", BranchCode: "BR01", BranchName: "South", EnterpriseGlobalID: g.eg,
		LicenseType: order.LicenseType(licenseType), Assets: []order.Asset{asset}, SrcLicenseOrderID: src,
	})
	if err != nil {
		t.Fatal(err)
	}
	return lo
}

func batch(t *testing.T, o *order.ClientWithResponses, g globex, id string, orders ...order.LicenseOrder) map[int32]string {
	results := *success(o.BatchOrderWithResponse(ctx, &order.BatchOrderParams{AppKey: "scenario-go"},
		order.BatchOrderRequest{ChannelCode: "CH01", ChannelOrderID: id, SyncMode: "sync", OrderList: orders}))(t).JSON200.Data
	ids := map[int32]string{}
	for _, r := range results {
		if !strings.HasPrefix(r.LicenseOrderID, "LO-") || r.CustomerID != g.cid {
			t.Fatalf("batchOrder %s: %+v", id, r)
		}
		ids[r.Sequence] = r.LicenseOrderID
	}
	if len(ids) != len(orders) {
		t.Fatalf("batchOrder %s: %d results for %d orders", id, len(ids), len(orders))
	}
	return ids
}

func batchSteps(t *testing.T, o *order.ClientWithResponses, g *globex) {
	midMonth := batch(t, o, *g, "CO-2026-01-17",
		newBuy(t, *g, 1, "normal_recover_usbkey", order.Asset{AssetNos: []string{g.a},
			Products: []order.Product{product(g.a, "CAD", 5), product(g.a, "RENDER", 2)}}, nil),
		newBuy(t, *g, 2, "normal_recover_usbkey", order.Asset{AssetNos: []string{g.b},
			Products: []order.Product{product(g.b, "CAD", 5)}}, nil))
	orderOfA := midMonth[1]

	var deleteAsset, deleteProduct order.LicenseOrder
	if err := deleteAsset.FromDeleteAssetOrder(order.DeleteAssetOrder{
		Sequence: 3, CustomerID: g.cid, EnterpriseGlobalID: g.eg, LicenseType: "normal_recover_usbkey",
		Assets: []order.RevokedAsset{{AssetNos: []string{g.b}}},
	}); err != nil {
		t.Fatal(err)
	}
	if err := deleteProduct.FromDeleteProductOrder(order.DeleteProductOrder{
		Sequence: 4, CustomerID: g.cid, EnterpriseGlobalID: g.eg, LicenseType: "normal_recover_usbkey",
		SrcLicenseOrderID: &orderOfA,
		Assets: []order.RevokedProductAsset{{AssetNos: []string{g.a}, Products: []order.RevokedProduct{
			{CrmProductID: "P-" + g.a + "-RENDER", ProductURI: "RENDER", LimitConcurrent: 2}}}},
	}); err != nil {
		t.Fatal(err)
	}
	extends := []order.AssetExtension{{ExtendCode: ptr("gxxp"), ExtendValue: ptr("true")}}
	monthEnd := batch(t, o, *g, "CO-2026-01-31",
		newBuy(t, *g, 1, "normal_recover_usbkey", order.Asset{AssetNos: []string{g.c},
			Products: []order.Product{product(g.c, "VIEWER", 1)}}, nil),
		newBuy(t, *g, 2, "cloud_customer", order.Asset{AssetNos: []string{g.d}, AssetExtendList: &extends,
			Products: []order.Product{product(g.d, "CLOUD", 10)}}, &orderOfA),
		deleteAsset, deleteProduct)
	if len(monthEnd) != 4 {
		t.Fatalf("batchOrder CO-2026-01-31: %v", monthEnd)
	}
}

func lockStatuses(t *testing.T, o *order.ClientWithResponses, disable bool, nums ...string) map[string]int {
	body := order.LockRequest{AssetNums: nums, OperatorIdentity: "ops@example.com"}
	var results []order.LockResultItem
	if disable {
		results = *success(o.DisableLocksWithResponse(ctx, nil, body))(t).JSON200.Data
	} else {
		results = *success(o.EnableLocksWithResponse(ctx, nil, body))(t).JSON200.Data
	}
	statuses := map[string]int{}
	for _, r := range results {
		statuses[r.AssetNum] = int(r.Status)
	}
	return statuses
}

func assetSteps(t *testing.T, o *order.ClientWithResponses, g globex) {
	virtual := func(extendCode *string) []order.VirtualAsset {
		return *success(o.ListVirtualAssetsWithResponse(ctx, g.eg,
			&order.ListVirtualAssetsParams{ExtendCode: extendCode}))(t).JSON200.Data
	}
	cloud := virtual(ptr("gxxp"))
	if len(cloud) != 1 {
		t.Fatalf("listVirtualAssets gxxp: %+v", cloud)
	}
	va := cloud[0]
	if va.AssetNum != g.d || va.LicenseType != "cloud_customer" || va.CustomerID != g.cid || va.KeyChipType != 2 || va.BorrowedUsbKey {
		t.Fatalf("listVirtualAssets: %+v", va)
	}
	if len(va.AssetExtends) != 1 || va.AssetExtends[0].ExtendCode != "gxxp" || va.AssetExtends[0].ExtendValue != "true" {
		t.Fatalf("listVirtualAssets extends: %+v", va.AssetExtends)
	}
	if none := virtual(ptr("none-such")); len(none) != 0 {
		t.Fatalf("listVirtualAssets none-such: %+v", none)
	}
	if every := virtual(nil); len(every) != 1 {
		t.Fatalf("listVirtualAssets: %+v", every)
	}
	// Revoked by delete_asset (2), a cloud asset is no lock (4), no such lock (2).
	want := map[string]int{g.a: 1, g.b: 2, g.d: 4, missing: 2}
	if got := lockStatuses(t, o, true, g.a, g.b, g.d, missing); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("disableLocks: %v, want %v", got, want)
	}
	want = map[string]int{g.a: 1, g.c: 1}
	if got := lockStatuses(t, o, false, g.a, g.c); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("enableLocks: %v, want %v", got, want)
	}
}

func employeeSteps(t *testing.T, m *member.ClientWithResponses, g globex) {
	reply, partial := refusal(m.AddMembersWithResponse(ctx, g.eg, nil, member.AddMembersRequest{
		UserList: []member.NewMember{
			{UserName: "dave", Name: "Dave", Password: "Initial-Pass-4", Remark: ptr("night shift"),
				PasswordMobile: ptr("13900000000"), DepartmentID: ptr(int64(7))},
			{UserName: "erin", Name: "Erin", Password: "Initial-Pass-5"},
			{UserName: "bad_name", Name: "Mallory", Password: "Initial-Pass-6"},
		},
	}))(t, "60027")
	result := reply.JSON299.Data
	if partial.Message == "" || result == nil || len(result.Succeeded) != 2 || len(result.Failed) != 1 {
		t.Fatalf("addMembers: a partial failure carries both lists: %+v", reply.JSON299)
	}
	dave, erin := result.Succeeded[0], result.Succeeded[1]
	if !strings.HasPrefix(dave.UserName, "dave@") || !strings.HasPrefix(erin.UserName, "erin@") ||
		*dave.DepartmentID != 7 || *dave.Remark != "night shift" || dave.Deleted {
		t.Fatalf("addMembers succeeded: %+v", result.Succeeded)
	}
	if failed := result.Failed[0]; !strings.HasPrefix(failed.UserName, "bad_name") || !strings.Contains(failed.Message, "letters and digits") {
		t.Fatalf("addMembers failed: %+v", result.Failed)
	}

	gina := func(password string) member.AddMembersRequest {
		return member.AddMembersRequest{UserList: []member.NewMember{{UserName: "gina", Name: "Gina", Password: password}}}
	}
	refusal(m.AddMembersWithResponse(ctx, g.eg, nil, gina("abc")))(t, "50003")
	if added := success(m.AddMembersWithResponse(ctx, g.eg, nil, gina("Initial-Pass-7")))(t).JSON200.Data; len(added.Succeeded) != 1 || len(added.Failed) != 0 {
		t.Fatalf("addMembers gina: %+v", added)
	}

	everyone, pages := listAll(t, m, g.eg)
	if len(everyone) != 5 || pages != 3 {
		t.Fatalf("listMembers: %d employees over %d pages of 2", len(everyone), pages)
	}

	success(m.EditMemberWithResponse(ctx, g.eg, dave.GlobalID, nil, member.EditMemberRequest{
		UserName: "dave", Name: "Dave Smith", DepartmentID: ptr(int64(8)), Remark: ptr("day shift"),
	}))(t)
	found := page(t, m, g.eg, 1, ptr("smith")).List
	if len(found) != 1 || found[0].Name != "Dave Smith" || found[0].DepartmentID != 8 ||
		found[0].Remark != "day shift" || found[0].PasswordMobile != "13900000000" {
		t.Fatalf("editMember: %+v", found)
	}

	refusal(m.ResetMemberPasswordWithResponse(ctx, g.eg, erin.GlobalID, nil, member.ResetPasswordRequest{Password: "abc"}))(t, "50003")
	success(m.ResetMemberPasswordWithResponse(ctx, g.eg, erin.GlobalID, nil, member.ResetPasswordRequest{Password: "New-Pass-2026"}))(t)

	success(m.DeleteMemberWithResponse(ctx, g.eg, erin.GlobalID, nil))(t)
	refusal(m.DeleteMemberWithResponse(ctx, g.eg, erin.GlobalID, nil))(t, "60002")
}

func page(t *testing.T, m *member.ClientWithResponses, eg string, n int32, keyword *string) member.MemberPage {
	return *success(m.ListMembersWithResponse(ctx, eg, &member.ListMembersParams{
		PageNum: n, PageSize: 2, Keyword: keyword,
	}))(t).JSON200.Data
}

// listAll reads every page of the enterprise's employees, and one past the last.
func listAll(t *testing.T, m *member.ClientWithResponses, eg string) ([]member.MemberListItem, int) {
	var everyone []member.MemberListItem
	for n := int32(1); ; n++ {
		p := page(t, m, eg, n, nil)
		if p.PageNum != n || int(p.Size) != len(p.List) {
			t.Fatalf("listMembers page %d: %+v", n, p)
		}
		everyone = append(everyone, p.List...)
		if !p.HasNextPage {
			if !p.IsLastPage || int(p.Total) != len(everyone) || int(p.Pages) != int(n) {
				t.Fatalf("listMembers last page %d: %+v", n, p)
			}
			if past := page(t, m, eg, n+1, nil); len(past.List) != 0 {
				t.Fatalf("listMembers past the last page: %+v", past.List)
			}
			return everyone, int(n)
		}
	}
}

func lendingSteps(t *testing.T, sb *sandbox.Sandbox, o *order.ClientWithResponses, m *member.ClientWithResponses, g globex) {
	assetNums := func(eg string) []member.EnterpriseAsset {
		return *success(m.ListAssetNumsWithResponse(ctx, eg, nil))(t).JSON200.Data
	}
	products := func(assetID string) []string {
		list := success(m.ListAssetProductsWithResponse(ctx, assetID, nil))(t).JSON200.Data.ProductInstanceList
		var uris []string
		for _, p := range list {
			uris = append(uris, p.ProductURI)
		}
		slices.Sort(uris)
		return uris
	}
	ours := assetNums(g.eg)
	var nums []string
	assetA := ""
	for _, a := range ours {
		nums = append(nums, a.AssetNum)
		if a.AssetNum == g.a {
			assetA = a.AssetID
		}
	}
	slices.Sort(nums)
	if !slices.Equal(nums, []string{g.a, g.c, g.d}) || !slices.Equal(products(assetA), []string{"CAD"}) {
		t.Fatalf("listAssetNums / listAssetProducts: %v (RENDER was revoked)", nums)
	}

	acme := sb.Seeded.Enterprises[0]
	lentLocks := func() []member.LentLock {
		return *success(m.ListLentLocksWithResponse(ctx, acme.EnterpriseGlobalID, nil))(t).JSON200.Data
	}
	lent := lentLocks()
	if len(lent) != 1 || lent[0].AssetNum != acme.Assets["lent-lock"].AssetNum || lent[0].BorrowedFlag || lent[0].CloudAccountGlobalID != nil {
		t.Fatalf("listLentLocks: %+v", lent)
	}
	lentLock := lent[0]

	carol, alice := acme.Members["carol"], acme.Members["alice"]
	bobsLock := acme.Assets["cad-lock-2"]
	success(m.ConfigureMemberAssetsWithResponse(ctx, carol, nil, member.ConfigureAssetsRequest{
		AddAssets: []string{bobsLock.AssetNum}, DeleteAssets: []string{},
	}))(t)
	held := slices.IndexFunc(assetNums(acme.EnterpriseGlobalID), func(a member.EnterpriseAsset) bool {
		return a.AssetNum == bobsLock.AssetNum && a.CloudAccountGlobalID != nil && *a.CloudAccountGlobalID == carol
	})
	if held < 0 {
		t.Fatalf("configureMemberAssets: %s not assigned to carol", bobsLock.AssetNum)
	}

	lend := func(who, assetID string) (*member.LendAssetsResponse, error) {
		return m.LendAssetsWithResponse(ctx, who, nil, member.LendAssetsRequest{
			BorrowedUsbKey: lentLock.AssetNum, AssetIDs: []string{assetID},
		})
	}
	if got := lockStatuses(t, o, true, lentLock.AssetNum); got[lentLock.AssetNum] != 1 {
		t.Fatalf("disableLocks lent lock: %v", got)
	}
	refusal(lend(carol, bobsLock.AssetID))(t, "33008")
	if got := lockStatuses(t, o, false, lentLock.AssetNum); got[lentLock.AssetNum] != 1 {
		t.Fatalf("enableLocks lent lock: %v", got)
	}
	success(lend(carol, bobsLock.AssetID))(t)

	loans := lentLocks()
	if !loans[0].BorrowedFlag || loans[0].CloudAccountGlobalID == nil || *loans[0].CloudAccountGlobalID != carol {
		t.Fatalf("listLentLocks after lending: %+v", loans)
	}
	if got := products(lentLock.AssetID); !slices.Equal(got, []string{"cad", "viewer"}) {
		t.Fatalf("the lent lock carries %v", got)
	}
	refusal(lend(alice, acme.Assets["cad-lock-1"].AssetID))(t, "33018")
}
