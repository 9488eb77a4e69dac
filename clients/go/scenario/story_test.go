package scenario_test

import (
	"errors"
	"testing"

	"example.com/licensing-sdk/clients/go/licensing"
	"example.com/licensing-sdk/clients/go/member"
	"example.com/licensing-sdk/clients/go/order"
	"example.com/licensing-sdk/clients/go/sandbox"
)

// TestPartnerStory is a partner's first day, in an empty tenant of its own: an enterprise,
// a mixed batch, a lock disabled, an employee added, a business error read with its code,
// the second page of the employee list.
func TestPartnerStory(t *testing.T) {
	t.Parallel()
	sb := sandbox.Start(t, sandbox.Options{})
	o, m := sb.Order(), sb.Member()

	// An enterprise, with its channel customer.
	created, err := o.CreateEnterpriseWithResponse(ctx, nil, order.CreateEnterpriseRequest{
		CrmCustomerID: "CRM-INITECH", CustomerName: "Initech", BranchName: "Main",
	})
	if err := licensing.Check(created, err); err != nil {
		t.Fatal(err)
	}
	eg := created.JSON200.Data.EnterpriseGlobalID
	bound := success(o.BindEnterpriseWithResponse(ctx, nil, order.BindEnterpriseRequest{
		ChannelCode: "CH01", ChannelCustomerID: "CC-INITECH", CustomerName: "Initech (CH01)",
		BranchName: "Main", EnterpriseName: "Initech", PasswordMobile: "13800000000",
	}))(t).JSON200.Data
	g := globex{eg: eg, cid: bound.CustomerID}

	// A mixed batch: two locks bought, then one of them revoked with a new purchase beside it.
	numbers := *success(o.AllocateShellNumsWithResponse(ctx, nil, order.AllocateShellNumsRequest{Size: 3}))(t).JSON200.Data
	bought := batch(t, o, g, "CO-INITECH-1",
		newBuy(t, g, 1, "normal_recover_usbkey", order.Asset{AssetNos: numbers[:1],
			Products: []order.Product{product(numbers[0], "CAD", 5)}}, nil),
		newBuy(t, g, 2, "normal_recover_usbkey", order.Asset{AssetNos: numbers[1:2],
			Products: []order.Product{product(numbers[1], "CAD", 5)}}, nil))
	var revoke order.LicenseOrder
	if err := revoke.FromDeleteAssetOrder(order.DeleteAssetOrder{
		Sequence: 2, CustomerID: g.cid, EnterpriseGlobalID: eg, LicenseType: "normal_recover_usbkey",
		Assets: []order.RevokedAsset{{AssetNos: numbers[1:2]}},
	}); err != nil {
		t.Fatal(err)
	}
	mixed := batch(t, o, g, "CO-INITECH-2",
		newBuy(t, g, 1, "normal_recover_usbkey", order.Asset{AssetNos: numbers[2:],
			Products: []order.Product{product(numbers[2], "VIEWER", 1)}}, nil),
		revoke)
	if bought[1] == mixed[1] {
		t.Fatalf("each order has an id of its own: %v, %v", bought, mixed)
	}

	// A lock disabled; the revoked one is no lock any more.
	if got := lockStatuses(t, o, true, numbers[0], numbers[1]); got[numbers[0]] != 1 || got[numbers[1]] != 2 {
		t.Fatalf("disableLocks: %v", got)
	}

	// An employee added; a second one refused, read as a business error with its code.
	add := func(name, password string) (*member.AddMembersResponse, error) {
		return m.AddMembersWithResponse(ctx, eg, nil, member.AddMembersRequest{
			UserList: []member.NewMember{{UserName: name, Name: name, Password: password}},
		})
	}
	if added := success(add("milton", "Stapler-Pass-1"))(t).JSON200.Data; len(added.Succeeded) != 1 {
		t.Fatalf("addMembers: %+v", added)
	}
	var business *licensing.BusinessError
	if err := licensing.Check(add("bill", "abc")); !errors.As(err, &business) || business.Code != "50003" || business.Status != 299 {
		t.Fatalf("addMembers with a 3-character password: %v", err)
	}

	// The second page: the two employees the enterprise came with, and milton.
	first, second := page(t, m, eg, 1, nil), page(t, m, eg, 2, nil)
	if !first.HasNextPage || second.HasNextPage || len(second.List) != 1 || second.Total != 3 {
		t.Fatalf("listMembers: page 1 %+v, page 2 %+v", first, second)
	}
	if second.List[0].GlobalID == first.List[0].GlobalID || second.List[0].GlobalID == first.List[1].GlobalID {
		t.Fatalf("page 2 repeats page 1: %+v", second.List)
	}
}
