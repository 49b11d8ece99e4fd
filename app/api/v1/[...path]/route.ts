import { handleRestRequest } from "@/server/http/rest-handler";

export const dynamic = "force-dynamic";

const handler = (req: Request) => handleRestRequest(req);

export { handler as GET, handler as POST, handler as PUT, handler as PATCH, handler as DELETE };
