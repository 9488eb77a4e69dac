// What the example suites order: Globex Engineering bound to CH01, and a new_buy of one
// of its assets, every documented field given.

/** The body that binds Globex to CH01 as the channel customer CC-GLOBEX. */
export const BIND_GLOBEX = {
  channelCode: "CH01",
  channelCustomerId: "CC-GLOBEX",
  customerName: "Globex Engineering (CH01)",
  branchName: "South",
  enterpriseName: "Globex Engineering",
  passwordMobile: "13800000000",
};

/** A `new_buy` order of asset `number` with one product `product`. */
export function newBuy(sequence, enterprise, customer, number, product) {
  return {
    sequence,
    orderType: "new_buy",
    licenseType: "normal_recover_usbkey",
    enterpriseGlobalId: enterprise,
    customerId: customer,
    crmCustomerId: "CRM-GLOBEX",
    customerName: "Globex Engineering",
    channelCustomerId: "CC-GLOBEX",
    adminName: "Ada Admin",
    adminAccount: "ada",
    adminEmail: "ada@example.com",
    adminCellNumber: "13800000000",
    passwordMobile: "13800000000",
    address: "12 Harbour Road",
    customerType: "company",
    branchCode: "BR01",
    branchName: "South",
    assets: [
      {
        assetNos: [number],
        products: [
          {
            crmProductId: `P-${number}`,
            parentCrmProductId: `A-${number}`,
            productUri: product,
            productName: `${product} license`,
            productType: "software",
            limitConcurrent: 5,
            limitTimeDuration: 0,
            trial: 0,
            trialEndDate: 0,
            timeUnit: "year",
            timeUnitQuantity: 1,
            timeDurationExpression: "1-0-0",
            productFeatures: [],
          },
        ],
      },
    ],
  };
}
