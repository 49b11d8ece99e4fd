import { isCurrencyCode } from "../../shared/currency";
import { type Db, newId } from "../db";
import { domainErrors, invalidAmount } from "../errors";

export interface OrderLine {
  sku: string;
  quantity: number;
}

/** Prices come from the catalogue, never from the client; repeated SKUs are merged. */
export async function createOrder(prisma: Db, accountId: string, lines: OrderLine[]) {
  const quantities = new Map<string, number>();
  for (const l of lines) quantities.set(l.sku, (quantities.get(l.sku) ?? 0) + l.quantity);
  const products = await prisma.product.findMany({ where: { sku: { in: [...quantities.keys()] } } });
  const unknown = [...quantities.keys()].filter((sku) => !products.some((p) => p.sku === sku));
  if (unknown.length > 0)
    throw domainErrors.invalid(`Unknown SKU: ${unknown.join(", ")}.`, { unknownSkus: unknown });
  const currencies = [...new Set(products.map((p) => p.currency))].sort();
  if (currencies.length !== 1)
    throw domainErrors.invalid(
      `An order is in one currency; these items are in ${currencies.join(" and ")}: order them separately.`,
      { currencies },
    );
  const currency = currencies[0] as string;
  // A product in a currency outside the table (decision 0175) is never charged.
  if (!isCurrencyCode(currency)) throw domainErrors.invalid(`${currency} is not a supported currency.`);
  const items = products.map((p) => {
    const quantity = quantities.get(p.sku) as number;
    return {
      sku: p.sku,
      name: p.name,
      unitPriceMinor: p.priceMinor,
      quantity,
      lineTotalMinor: p.priceMinor * quantity,
    };
  });
  const total = items.reduce((sum, i) => sum + i.lineTotalMinor, 0);
  // Charged as one payment of this total: Stripe's minimum, maximum and steps apply to it.
  const refused = invalidAmount(total, currency, "charge");
  if (refused) throw refused;
  return prisma.order.create({
    data: {
      id: newId(),
      accountId,
      totalMinor: total,
      currency,
      items: { create: items },
    },
    include: { items: true },
  });
}

export async function getOrderForAccount(prisma: Db, accountId: string, orderId: string) {
  const order = await prisma.order.findFirst({
    where: { id: orderId, accountId },
    include: {
      items: { orderBy: { id: "asc" } },
      payments: { orderBy: { createdAt: "asc" } },
      receipt: true,
    },
  });
  if (!order) throw domainErrors.notFound("Order");
  return order;
}

/** A payment of the account's own; another account's payment is "not found", as for orders. */
export async function getPaymentForAccount(prisma: Db, accountId: string, paymentId: string) {
  const payment = await prisma.payment.findFirst({ where: { id: paymentId, accountId } });
  if (!payment) throw domainErrors.notFound("Payment");
  return payment;
}
