// What the example suites order: a new_buy of one asset of Globex Engineering, every
// documented field given.

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
